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
	exp     sdktrace.SpanExporter
	timeout time.Duration // how long a span may wait
	batch   int           // spans per export
	max     int           // spans queued at most
	handle  func(error)   // failures and drops (otel.Handle: exportErrors rate-limits them)

	mu      sync.Mutex
	queue   []sdktrace.ReadOnlySpan
	spare   []sdktrace.ReadOnlySpan // the previous queue, emptied, reused
	dropped int
	stopped bool

	exporting chan struct{} // holds a token during an export: one at a time, the loop's or a flush's
	kick      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	once      sync.Once
}

func newSpanBatcher(exp sdktrace.SpanExporter, handle func(error), timeout time.Duration, batch, max int) *spanBatcher {
	b := &spanBatcher{exp: exp, timeout: timeout, batch: batch, max: max, handle: handle,
		queue:     make([]sdktrace.ReadOnlySpan, 0, batch),
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
	b.mu.Lock()
	if b.stopped || len(b.queue) >= b.max {
		b.dropped++
		b.mu.Unlock()
		return
	}
	b.queue = append(b.queue, s)
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
		err = b.exp.ExportSpans(ctx, spans[i:min(i+b.batch, len(spans))])
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
		b.mu.Unlock()
		if e := b.exp.Shutdown(ctx); err == nil {
			err = e
		}
	})
	return err
}
