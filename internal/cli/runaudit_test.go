package cli

import (
	"log/slog"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/gate"
)

// TestRequiredAuditRefusesCallsOnceBroken: when the policy requires the
// audit log and an event could not be written, calls are refused.
func TestRequiredAuditRefusesCallsOnceBroken(t *testing.T) {
	t.Parallel()
	for _, required := range []bool{true, false} {
		a := &auditSink{required: required}
		h := a.hooks()
		if required && h.Call == nil {
			t.Fatal("no call hook when the audit log is required")
		}
		if h.Call != nil {
			if v := h.Call(gate.CallInfo{}); v.Kind != gate.Allow {
				t.Errorf("required=%v: refused before any failure", required)
			}
		}
		a.broken.Store(true)
		if h.Call != nil {
			if v := h.Call(gate.CallInfo{}); v.Kind != gate.Refuse || v.Refusal.Reason != "audit-unavailable" {
				t.Errorf("required=%v: verdict %+v after a failure", required, v)
			}
		} else if required {
			t.Error("required audit log without a call hook")
		}
	}
}

// memWriter is an auditWriter that keeps what it is given: the sink's
// queue is under test here, not the log.
type memWriter struct {
	batches [][]audit.Event
	block   chan struct{} // when set, AppendAll waits on it
}

func (w *memWriter) AppendAll(evs []audit.Event) error {
	if w.block != nil {
		<-w.block
	}
	w.batches = append(w.batches, append([]audit.Event(nil), evs...))
	return nil
}

func (w *memWriter) Close() error { return nil }

// TestAuditSinkWritesEveryEventInOrder: what record queues is written in
// order, in batches of at most maxAuditBatch, and close writes what is
// still gathered.
func TestAuditSinkWritesEveryEventInOrder(t *testing.T) {
	t.Parallel()
	w := &memWriter{}
	a := &auditSink{lg: w, log: slog.New(slog.DiscardHandler), wake: make(chan struct{}, 1), full: make(chan struct{}, 1), closing: make(chan struct{})}
	a.wg.Add(1)
	go a.write()
	const n = 3*maxAuditBatch + 7
	for i := range n {
		a.record(audit.Event{Seq: int64(i)})
	}
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	next := int64(0)
	for _, b := range w.batches {
		if len(b) == 0 || len(b) > maxAuditBatch {
			t.Fatalf("a batch of %d events", len(b))
		}
		for _, ev := range b {
			if ev.Seq != next {
				t.Fatalf("event %d written where %d was due", ev.Seq, next)
			}
			next++
		}
	}
	if next != n || a.dropped.Load() != 0 || a.broken.Load() {
		t.Fatalf("%d of %d events written, %d dropped, broken %v", next, n, a.dropped.Load(), a.broken.Load())
	}
}

// TestAuditSinkDropsBeyondItsQueue: while the writer is stuck, at most
// auditQueue events wait; the rest are dropped, counted, and the sink is
// broken (so audit.required refuses calls).
func TestAuditSinkDropsBeyondItsQueue(t *testing.T) {
	t.Parallel()
	w := &memWriter{block: make(chan struct{})}
	a := &auditSink{lg: w, log: slog.New(slog.DiscardHandler), wake: make(chan struct{}, 1), full: make(chan struct{}, 1), closing: make(chan struct{}), required: true}
	a.wg.Add(1)
	go a.write()
	a.record(audit.Event{Seq: 0})
	a.mu.Lock() // wait until the writer holds the first event
	for len(a.queue) != 0 {
		a.mu.Unlock()
		time.Sleep(time.Millisecond)
		a.mu.Lock()
	}
	a.mu.Unlock()
	for i := 1; i <= auditQueue+10; i++ {
		a.record(audit.Event{Seq: int64(i)})
	}
	if got := a.dropped.Load(); got != 10 {
		t.Errorf("%d events dropped, want 10", got)
	}
	if v := a.hooks().Call(gate.CallInfo{}); v.Kind != gate.Refuse {
		t.Errorf("calls allowed after events were dropped under audit.required: %+v", v)
	}
	close(w.block)
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	written := 0
	for _, b := range w.batches {
		written += len(b)
	}
	if written != auditQueue+1 {
		t.Errorf("%d events written, want %d", written, auditQueue+1)
	}
}
