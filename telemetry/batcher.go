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

	limits sdktrace.SpanLimits // the provider's, for the request spans it encodes

	mu       sync.Mutex
	queue    []endedSpan
	enc      []byte      // the encoded request spans the queue's entries point into
	spare    []endedSpan // the previous queue, emptied, reused
	spareEnc []byte      // the previous queue's bytes, emptied, reused
	dropped  int
	stopped  bool

	exporting chan struct{} // holds a token during an export: one at a time, the loop's or a flush's
	kick      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	once      sync.Once
}

// endedSpan is a queued span: an SDK span, or mcpseal's request span
// (reqspan.go) with the upstream round trip the exporter writes as its
// child, queued encoded: its n spans (1 or 2) are the ScopeSpans.spans
// fields at enc[from:to] of the batch (endedBatch). The two are queued,
// exported and dropped together. Encoding a request span when it ends
// keeps nothing of the request until the export: the request is reused,
// and a queue of bytes gives the garbage collector nothing to follow
// (docs/performance.md, issue 16, fifth pass).
type endedSpan struct {
	sdktrace.ReadOnlySpan
	from, to int32
	n        int32
}

func (e endedSpan) spans() int {
	if e.ReadOnlySpan != nil {
		return 1
	}
	return int(e.n)
}

// An endedBatch is ended spans and the bytes of the encoded ones.
type endedBatch struct {
	spans []endedSpan
	enc   []byte
}

// endRequest queues an ended request span (its end, attributes and
// status set) with its upstream span, when it is recorded and sampled,
// encoding both now: rs may be reused as soon as it returns.
func (b *spanBatcher) endRequest(rs *reqSpan) {
	if b == nil || !rs.record || !rs.sc.IsSampled() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped || len(b.queue) >= b.max || len(b.enc) >= maxQueuedBytes {
		b.dropped++
		if rs.up.id.IsValid() {
			b.dropped++
		}
		return
	}
	var e endedSpan
	b.enc, e = appendEnded(b.enc, rs, b.limits)
	b.queue = append(b.queue, e)
	if len(b.queue) >= b.batch {
		b.kickLocked()
	}
}

// appendEnded appends rs's upstream span (when it has one) and rs, as
// ScopeSpans.spans fields, to enc, and returns the entry that names them.
func appendEnded(enc []byte, rs *reqSpan, lim sdktrace.SpanLimits) ([]byte, endedSpan) {
	e := endedSpan{from: int32(len(enc)), n: 1}
	if rs.up.id.IsValid() {
		enc = appendUpstreamSpan(enc, rs.sc, rs.up, lim, rs.start)
		e.n = 2
	}
	enc = appendRequestSpan(enc, rs, lim)
	e.to = int32(len(enc))
	return enc, e
}

// maxQueuedBytes bounds the encoded spans queued: spanQueue request
// spans of mcpseal's take a small part of it (their attributes are safe
// names and codes); beyond it spans are dropped and counted, as beyond
// the queue's length. It also keeps every offset within an int32.
const maxQueuedBytes = 8 << 20

// endedExporter sends batches of ended spans (spanExporter).
type endedExporter interface {
	exportEnded(ctx context.Context, batch endedBatch) error
	Shutdown(ctx context.Context) error
}

func newSpanBatcher(exp endedExporter, handle func(error), lim sdktrace.SpanLimits, timeout time.Duration, batch, max int) *spanBatcher {
	b := &spanBatcher{exp: exp, timeout: timeout, batch: batch, max: max, handle: handle, limits: lim,
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
	if len(b.queue) >= b.batch {
		b.kickLocked()
	}
	b.mu.Unlock()
}

// kickLocked wakes the loop for a full batch (kick holds one token: a
// wake-up already pending is enough).
func (b *spanBatcher) kickLocked() {
	select {
	case b.kick <- struct{}{}:
	default:
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
	spans, enc := b.queue, b.enc
	b.queue, b.spare = b.spare[:0], nil
	b.enc, b.spareEnc = b.spareEnc[:0], nil
	dropped := b.dropped
	b.dropped = 0
	b.mu.Unlock()
	if dropped > 0 {
		b.handle(fmt.Errorf("%d spans dropped: the export queue was full", dropped))
	}
	var err error
	i := 0
	for ; i < len(spans) && err == nil; i += b.batch {
		err = b.exp.exportEnded(ctx, endedBatch{spans: spans[i:min(i+b.batch, len(spans))], enc: enc})
	}
	if i < len(spans) {
		// A failed batch is lost (its error says so); the batches after
		// it are not sent either, and are counted.
		b.handle(fmt.Errorf("%d spans dropped: an export before them failed", countSpans(spans[i:])))
	}
	clear(spans) // the spans go; the slices are kept for the next queue
	b.mu.Lock()
	if cap(spans) <= b.max {
		b.spare = spans[:0]
	}
	if cap(enc) <= maxKeptBuffer {
		b.spareEnc = enc[:0]
	}
	b.mu.Unlock()
	return err
}

// countSpans is the number of spans of the queued entries es.
func countSpans(es []endedSpan) int {
	n := 0
	for _, e := range es {
		n += e.spans()
	}
	return n
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
		// What is still queued (the context ended before it could be
		// exported) is never sent: dropped, and counted.
		b.dropped += countSpans(b.queue)
		clear(b.queue)
		b.queue, b.enc = b.queue[:0], b.enc[:0]
		dropped := b.dropped
		b.dropped = 0
		b.mu.Unlock()
		if dropped > 0 {
			b.handle(fmt.Errorf("%d spans dropped: ended or still queued as telemetry shut down", dropped))
		}
		if e := b.exp.Shutdown(ctx); err == nil {
			err = e
		}
	})
	return err
}
