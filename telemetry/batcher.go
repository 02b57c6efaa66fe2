package telemetry

import (
	"context"
	"fmt"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// spanBatcher is the span processor between the SDK's tracer and the
// exporter, in place of the SDK's batch span processor. It keeps the same
// bounds (spanQueue spans wait at most spanBatchTimeout; beyond the
// queue, spans are dropped and counted, never waited for), but an ended
// span is only appended to a slice under a mutex: the SDK's processor
// sends every span over a channel to its goroutine, which wakes that
// goroutine once or twice per call and cost the traced gate a visible
// share of its CPU in scheduling (docs/performance.md, issue 16). This
// one's goroutine wakes when a batch is full, when the timeout passes,
// and to stop.
type spanBatcher struct {
	exp     endedExporter
	timeout time.Duration // how long a span may wait
	batch   int           // entries per export (a request span and its upstream span are one)
	max     int           // entries queued at most
	handle  func(error)   // failures and drops (otel.Handle: exportErrors rate-limits them)

	mu      sync.Mutex
	queue   []endedSpan
	spare   []endedSpan // the previous queue, emptied, reused
	dropped int
	stopped bool
	// ups are the upstream spans of request spans being ended, by the
	// request span's id: put by withUpstream just before the span's End,
	// taken by OnEnd within it (see upstream.go).
	ups map[trace.SpanID]upstreamSpan

	exporting chan struct{} // holds a token during an export: one at a time, the loop's or a flush's
	kick      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	once      sync.Once
}

// endedSpan is a queued span: an SDK span and, for a request span, the
// upstream round trip the exporter writes as its child (up.id zero: none).
// The two are queued, exported and dropped together.
type endedSpan struct {
	sdktrace.ReadOnlySpan
	up upstreamSpan
}

func (e endedSpan) spans() int {
	if e.up.id.IsValid() {
		return 2
	}
	return 1
}

// endedExporter sends batches of ended spans (spanExporter).
type endedExporter interface {
	exportEnded(ctx context.Context, spans []endedSpan) error
	Shutdown(ctx context.Context) error
}

// maxEnding bounds ups: an entry lives only while one span's End runs,
// so it holds about as many as there are goroutines ending spans at once.
const maxEnding = 1024

func newSpanBatcher(exp endedExporter, handle func(error), timeout time.Duration, batch, max int) *spanBatcher {
	b := &spanBatcher{exp: exp, timeout: timeout, batch: batch, max: max, handle: handle,
		queue:     make([]endedSpan, 0, batch),
		ups:       make(map[trace.SpanID]upstreamSpan),
		exporting: make(chan struct{}, 1), kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop()
	return b
}

// OnStart implements sdktrace.SpanProcessor.
func (b *spanBatcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// endWithUpstream ends the request span sp, queueing up as its child: a
// sampled span's End calls OnEnd on this goroutine, which takes up. An
// unsampled span (or a provider shut down, which calls no processor)
// exports neither; a nil batcher only ends sp.
func (b *spanBatcher) endWithUpstream(sp trace.Span, up upstreamSpan) {
	sc := sp.SpanContext()
	if b == nil || !up.id.IsValid() || !sc.IsSampled() {
		sp.End()
		return
	}
	id := sc.SpanID()
	b.mu.Lock()
	put := !b.stopped && len(b.ups) < maxEnding
	if put {
		b.ups[id] = up
	} else {
		b.dropped++ // the child; the parent goes its own way
	}
	b.mu.Unlock()
	sp.End()
	// OnEnd took up. An End that calls no processor leaves it: the
	// provider is shutting down, and Shutdown clears ups after it stops
	// the batcher (which then puts no more).
}

// OnEnd implements sdktrace.SpanProcessor: it queues a sampled span, with
// its upstream span when it has one.
func (b *spanBatcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	e := endedSpan{ReadOnlySpan: s}
	b.mu.Lock()
	if len(b.ups) > 0 {
		id := s.SpanContext().SpanID()
		if up, ok := b.ups[id]; ok {
			e.up = up
			delete(b.ups, id)
		}
	}
	if b.stopped || len(b.queue) >= b.max {
		b.dropped += e.spans()
		b.mu.Unlock()
		return
	}
	b.queue = append(b.queue, e)
	full := len(b.queue) >= b.batch
	b.mu.Unlock()
	if full {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
}

func (b *spanBatcher) loop() {
	defer close(b.done)
	t := time.NewTicker(b.timeout)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.kick:
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
		if err := b.export(ctx); err != nil {
			b.handle(err)
		}
		cancel()
	}
}

// export sends what is queued now, in batches. Waiting for an export
// already under way (to a stalled collector) ends with ctx.
func (b *spanBatcher) export(ctx context.Context) error {
	select {
	case b.exporting <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-b.exporting }()
	b.mu.Lock()
	spans := b.queue
	b.queue, b.spare = b.spare[:0], nil
	dropped := b.dropped
	b.dropped = 0
	b.mu.Unlock()
	if dropped > 0 {
		b.handle(fmt.Errorf("%d spans dropped: the export queue was full", dropped))
	}
	var err error
	for i := 0; i < len(spans) && err == nil; i += b.batch {
		err = b.exp.exportEnded(ctx, spans[i:min(i+b.batch, len(spans))])
	}
	clear(spans) // the spans go; the slice is kept for the next queue
	b.mu.Lock()
	if cap(spans) <= b.max {
		b.spare = spans[:0]
	}
	b.mu.Unlock()
	return err
}

// ForceFlush implements sdktrace.SpanProcessor: it exports what is queued.
func (b *spanBatcher) ForceFlush(ctx context.Context) error {
	return b.export(ctx)
}

// Shutdown implements sdktrace.SpanProcessor: it stops the loop, exports
// what is queued and shuts the exporter down, all within ctx (a loop
// stalled on a collector is left to its own export timeout).
func (b *spanBatcher) Shutdown(ctx context.Context) error {
	var err error
	b.once.Do(func() {
		close(b.stop)
		select {
		case <-b.done:
			err = b.export(ctx)
		case <-ctx.Done():
			err = ctx.Err()
		}
		b.mu.Lock()
		b.stopped = true
		clear(b.ups)
		b.mu.Unlock()
		if e := b.exp.Shutdown(ctx); err == nil {
			err = e
		}
	})
	return err
}
