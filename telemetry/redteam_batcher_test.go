package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// failingExporter refuses every batch (a collector answering 503), and
// counts the spans it was given.
type failingExporter struct {
	mu    sync.Mutex
	given int
}

func (f *failingExporter) exportEnded(_ context.Context, batch endedBatch) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range batch.spans {
		f.given += s.spans()
	}
	return errors.New("collector: 503")
}

func (f *failingExporter) Shutdown(context.Context) error { return nil }

// droppedIn sums the counts of the batcher's "N spans dropped" reports.
func droppedIn(h *handled) int {
	n := 0
	for _, e := range strings.Split(h.all(), "; ") {
		var k int
		if _, err := fmt.Sscanf(e, "%d spans dropped", &k); err == nil {
			n += k
		}
	}
	return n
}

// TestRedTeamFailedBatchDropsTheBatchesAfterIt: a flush of a queue of
// several batches to a collector that refuses the first one. The
// batcher's promise (trace.go: "a failure drops that batch"; docs:
// spans past the bound are dropped and counted) is that the failed batch
// is lost, reported by its error, and nothing else goes silently: the
// batches after it were neither sent nor counted. Every span queued must
// be given to the exporter or reported dropped.
func TestRedTeamFailedBatchDropsTheBatchesAfterIt(t *testing.T) {
	t.Parallel()
	fe, h := &failingExporter{}, &handled{}
	b := newSpanBatcher(fe, h.handle, sdktrace.NewSpanLimits(), time.Hour, 4, 64)
	tel := samplingOnly(t)
	b.mu.Lock() // queue 12 spans (3 batches) without a kick reaching the loop first
	for range 12 {
		rs := tel.startRequestSpan(context.Background(), "tools/call", trace.SpanContext{}, time.Now())
		rs.end = time.Now()
		var e endedSpan
		b.enc, e = appendEnded(b.enc, &rs, b.limits)
		b.queue = append(b.queue, e)
	}
	b.mu.Unlock()
	if err := b.ForceFlush(context.Background()); err == nil {
		t.Fatal("the flush to a refusing collector succeeded")
	}
	fe.mu.Lock()
	given := fe.given
	fe.mu.Unlock()
	if lost := 12 - given; lost != droppedIn(h) {
		t.Errorf("12 spans queued: %d given to the exporter (%d of them refused), %d never sent, %d reported dropped (%q)", given, given, lost, droppedIn(h), h.all())
	}
	_ = b.Shutdown(context.Background())
}

// TestRedTeamShutdownTimeoutLosesQueuedSpansUncounted: the collector
// stalls the loop's export; more spans are queued; Close's grace ends
// before the export does. Shutdown returns the context's error and
// reports "N spans dropped: ended as telemetry shut down" for the spans
// ended after it began, but the spans still in the queue are never sent
// and never counted: the promise is dropped and counted.
func TestRedTeamShutdownTimeoutLosesQueuedSpansUncounted(t *testing.T) {
	t.Parallel()
	fe, h := &fakeExporter{block: make(chan struct{})}, &handled{}
	defer close(fe.block)
	b := newSpanBatcher(fe, h.handle, sdktrace.NewSpanLimits(), time.Hour, 2, 16)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	endSpans(tp, 2) // the loop takes them and stalls
	waitFor(t, "the stalled export", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.queue) == 0
	})
	endSpans(tp, 1) // queued: less than a batch, no kick
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := tp.Shutdown(ctx); err == nil {
		t.Fatal("Shutdown reported success with spans never sent")
	}
	b.mu.Lock()
	left := 0
	for _, e := range b.queue {
		left += e.spans()
	}
	b.mu.Unlock()
	if n := droppedIn(h); n != 1 || left != 0 {
		t.Errorf("one span queued behind a stalled export at Shutdown's timeout: %d reported dropped, %d left in a queue nobody exports (%q)", n, left, h.all())
	}
}
