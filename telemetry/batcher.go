package telemetry

import (
	"context"
	"fmt"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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

	exporting chan struct{} // holds a token during an export: one at a time, the loop's or a flush's
	kick      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	once      sync.Once
}

// endedSpan is a queued span: an SDK span, or mcpseal's request span
// (req, reqspan.go) with the upstream round trip the exporter writes as
// its child (up.id zero: none). The two are queued, exported and dropped
// together.
type endedSpan struct {
	sdktrace.ReadOnlySpan
	req *reqSpan
	up  upstreamSpan
}

func (e endedSpan) spans() int {
	if e.up.id.IsValid() {
		return 2
	}
	return 1
}

// endRequest queues an ended request span (its end, attributes and
// status set) with its upstream span, when it is recorded and sampled;
// the batcher keeps rs until it is exported, so it must not change after.
func (b *spanBatcher) endRequest(rs *reqSpan) {
	if b == nil || !rs.record || !rs.sc.IsSampled() {
		return
	}
	b.enqueue(endedSpan{req: rs, up: rs.up})
}

// endedExporter sends batches of ended spans (spanExporter).
type endedExporter interface {
	exportEnded(ctx context.Context, spans []endedSpan) error
	Shutdown(ctx context.Context) error
}

func newSpanBatcher(exp endedExporter, handle func(error), timeout time.Duration, batch, max int) *spanBatcher {
	b := &spanBatcher{exp: exp, timeout: timeout, batch: batch, max: max, handle: handle,
		queue:     make([]endedSpan, 0, batch),
		exporting: make(chan struct{}, 1), kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop()
	return b
}

// OnStart implements sdktrace.SpanProcessor.
func (b *spanBatcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd implements sdktrace.SpanProcessor: it queues a sampled span.
func (b *spanBatcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.enqueue(endedSpan{ReadOnlySpan: s})
}

// enqueue queues e, or drops and counts it when the queue is full or the
// batcher stopped.
func (b *spanBatcher) enqueue(e endedSpan) {
	b.mu.Lock()
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
			// Stopped first: a span ended from here on is dropped and
			// counted, not queued after the last export.
			b.mu.Lock()
			b.stopped = true
			b.mu.Unlock()
			err = b.export(ctx)
		case <-ctx.Done():
			err = ctx.Err()
		}
		b.mu.Lock()
		b.stopped = true
		dropped := b.dropped
		b.dropped = 0
		b.mu.Unlock()
		if dropped > 0 {
			b.handle(fmt.Errorf("%d spans dropped: ended as telemetry shut down", dropped))
		}
		if e := b.exp.Shutdown(ctx); err == nil {
			err = e
		}
	})
	return err
}
