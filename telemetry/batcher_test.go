package telemetry

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// fakeExporter counts what it is given; while block is open it waits.
type fakeExporter struct {
	mu      sync.Mutex
	batches []int
	block   chan struct{}
	stopped bool
}

func (f *fakeExporter) exportEnded(ctx context.Context, batch endedBatch) error {
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range batch.spans {
		n += s.spans()
	}
	f.batches = append(f.batches, n)
	return nil
}

func (f *fakeExporter) Shutdown(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	return nil
}

func (f *fakeExporter) total() (n int, batches []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.batches {
		n += b
	}
	return n, append([]int(nil), f.batches...)
}

// handled collects what a batcher reports.
type handled struct {
	mu   sync.Mutex
	errs []string
}

func (h *handled) handle(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, err.Error())
}

func (h *handled) all() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.errs, "; ")
}

func endSpans(tp trace.TracerProvider, n int) {
	tr := tp.Tracer("t")
	for i := 0; i < n; i++ {
		_, s := tr.Start(context.Background(), "s")
		s.End()
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSpanBatcherSendsFullBatchesAndOnTimeout: a full batch goes at once,
// a partial one when the timeout passes, and Shutdown sends the rest and
// stops the exporter.
func TestSpanBatcherSendsFullBatchesAndOnTimeout(t *testing.T) {
	t.Parallel()
	fe, h := &fakeExporter{}, &handled{}
	b := newSpanBatcher(fe, h.handle, sdktrace.NewSpanLimits(), time.Hour, 4, 100)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	endSpans(tp, 8)
	// A full batch goes without waiting for the (hour-long) timeout.
	waitFor(t, "a full batch", func() bool { n, _ := fe.total(); return n >= 4 })
	endSpans(tp, 3)
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, bs := fe.total(); n != 11 || slices.Max(bs) > 4 {
		t.Fatalf("%d spans exported after a flush, want 11, in batches of at most 4: %v", n, bs)
	}
	endSpans(tp, 2)
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := fe.total(); n != 13 || !fe.stopped {
		t.Fatalf("%d spans exported after shutdown (want 13), exporter stopped %v", n, fe.stopped)
	}
	endSpans(tp, 1) // after shutdown: nothing, no panic
	if n, _ := fe.total(); n != 13 || h.all() != "" {
		t.Fatalf("%d spans after shutdown, reports %q", n, h.all())
	}

	fe2 := &fakeExporter{}
	b2 := newSpanBatcher(fe2, h.handle, sdktrace.NewSpanLimits(), 20*time.Millisecond, 512, 2048)
	tp2 := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b2))
	defer tp2.Shutdown(context.Background())
	endSpans(tp2, 3)
	waitFor(t, "the timeout's export", func() bool { n, _ := fe2.total(); return n == 3 })
}

// TestSpanFloodAgainstStalledCollector: a collector that never answers
// while a client floods calls costs a bounded queue: ending a span never
// waits, the spans beyond the queue are dropped and reported with their
// count, and Shutdown returns within its context.
func TestSpanFloodAgainstStalledCollector(t *testing.T) {
	t.Parallel()
	fe, h := &fakeExporter{block: make(chan struct{})}, &handled{}
	b := newSpanBatcher(fe, h.handle, sdktrace.NewSpanLimits(), time.Hour, 8, 32) // full batches only: no timer in the way
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	start := time.Now()
	endSpans(tp, 8) // one batch: the loop takes it and blocks in the exporter
	waitFor(t, "the stalled export", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.queue) == 0
	})
	endSpans(tp, 10000)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("ending spans waited for the collector: %v", d)
	}
	b.mu.Lock()
	queued, dropped := len(b.queue), b.dropped
	b.mu.Unlock()
	if queued != 32 || dropped != 10000-32 {
		t.Fatalf("queued %d (bound 32), dropped %d", queued, dropped)
	}
	close(fe.block)
	waitFor(t, "the drops reported", func() bool { return strings.Contains(h.all(), "9968 spans dropped") })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := fe.total(); n != 8+32 {
		t.Fatalf("%d spans exported, want the 40 that were queued", n)
	}
}

// TestCloseWithStalledCollectorIsBounded: Shutdown (mcpseal's Close, with
// closeGrace) returns when its context ends, though the loop's export to a
// collector that never answers is still waiting.
func TestCloseWithStalledCollectorIsBounded(t *testing.T) {
	t.Parallel()
	fe := &fakeExporter{block: make(chan struct{})}
	defer close(fe.block)
	b := newSpanBatcher(fe, (&handled{}).handle, sdktrace.NewSpanLimits(), time.Hour, 2, 16)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	endSpans(tp, 2) // the loop takes them and stalls
	waitFor(t, "the stalled export", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.queue) == 0
	})
	endSpans(tp, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := tp.Shutdown(ctx); err == nil {
		t.Fatal("Shutdown reported success with spans never sent")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Shutdown took %v with a 100ms context", d)
	}
	if err := b.ForceFlush(ctx); err == nil {
		t.Fatal("a flush behind a stalled export reported success")
	}
}

// TestUnsampledSpansAreNotExported: with a sampler that records without
// sampling, the batcher sends nothing.
func TestUnsampledSpansAreNotExported(t *testing.T) {
	t.Parallel()
	fe := &fakeExporter{}
	b := newSpanBatcher(fe, (&handled{}).handle, sdktrace.NewSpanLimits(), time.Hour, 4, 16)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b), sdktrace.WithSampler(recordOnly{}))
	endSpans(tp, 5)
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := fe.total(); n != 0 {
		t.Fatalf("%d unsampled spans exported", n)
	}
}

type recordOnly struct{}

func (recordOnly) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	return sdktrace.SamplingResult{Decision: sdktrace.RecordOnly}
}
func (recordOnly) Description() string { return "recordOnly" }

// TestSpanEndedAtShutdownIsCountedNotLost: a span queued before Shutdown
// is exported by it; one ended once Shutdown has begun is dropped and
// counted, never left in a queue nobody exports.
func TestSpanEndedAtShutdownIsCountedNotLost(t *testing.T) {
	t.Parallel()
	fe, h := &fakeExporter{}, &handled{}
	b := newSpanBatcher(fe, h.handle, sdktrace.NewSpanLimits(), time.Hour, 8, 8)
	tel := samplingOnly(t)
	end := func() {
		rs := tel.startRequestSpan(context.Background(), "tools/call", trace.SpanContext{}, time.Now())
		rs.end = time.Now()
		b.endRequest(&rs)
	}
	end()
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	end()
	b.mu.Lock()
	queued, dropped := len(b.queue), b.dropped
	b.mu.Unlock()
	if n, _ := fe.total(); n != 1 || queued != 0 || dropped != 1 {
		t.Fatalf("exported %d (want the one ended before), %d left queued, %d dropped (want the one ended after)", n, queued, dropped)
	}
}

// encodingExporter keeps the ExportTraceServiceRequest of each batch.
type encodingExporter struct {
	mu   sync.Mutex
	own  spanOrigin
	reqs [][]byte
}

func (e *encodingExporter) exportEnded(_ context.Context, batch endedBatch) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reqs = append(e.reqs, appendTraceRequest(nil, batch, e.own))
	return nil
}

func (e *encodingExporter) Shutdown(context.Context) error { return nil }

// TestEndedRequestSpanOutlivesItsRequest: a request span is encoded when
// it ends, so the session may reuse the request at once (Session.release):
// what the collector gets is the span as it ended, not what the request
// later became, across batches and with spans from the SDK between.
func TestEndedRequestSpanOutlivesItsRequest(t *testing.T) {
	t.Parallel()
	exp := &encodingExporter{own: noLimits}
	b := newSpanBatcher(exp, (&handled{}).handle, noLimits.limits, time.Hour, 3, 64)
	tel := samplingOnly(t)
	var rs reqSpan // one request, reused for every span
	var want []string
	sdk := recorded(t, func(a, _ trace.TracerProvider) {
		_, s := a.Tracer("t").Start(context.Background(), "sdk")
		s.End()
	})[0]
	for i := range 7 {
		now := time.Now()
		rs = tel.startRequestSpan(context.Background(), "tools/call", trace.SpanContext{}, now)
		rs.name, rs.end = fmt.Sprintf("call %d", i), now.Add(time.Millisecond)
		rs.attrs = []attribute.KeyValue{attribute.String(attrOutcome, rs.name)}
		if i%2 == 0 {
			rs.up = upstreamSpan{id: newSpanID(), method: "tools/call", start: now, end: rs.end}
			want = append(want, upstreamName)
		}
		b.endRequest(&rs)
		want = append(want, rs.name)
		rs = reqSpan{name: "reused", attrs: []attribute.KeyValue{attribute.String(attrOutcome, "reused")}}
		if i == 3 {
			b.OnEnd(sdk)
			want = append(want, "sdk")
		}
	}
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, req := range exp.reqs {
		for _, rss := range decodeRequest(t, req) {
			for _, ss := range rss.ScopeSpans {
				for _, sp := range ss.Spans {
					got = append(got, sp.Name)
					for _, kv := range sp.Attributes {
						if kv.Value.GetStringValue() == "reused" {
							t.Errorf("span %q carries the reused request's attribute", sp.Name)
						}
					}
				}
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("exported %q, want %q", got, want)
	}
}

// samplingOnly is a Telemetry with only the default sampler, enough to
// start request spans.
func samplingOnly(t testing.TB) *Telemetry {
	t.Helper()
	sampler, err := samplerFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return &Telemetry{sampler: sampler}
}
