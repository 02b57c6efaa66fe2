package cli

import (
	"log/slog"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/gate"
)

// TestAttackAuditRefusalClearsAfterEventsWereLost: a caller (or a slow or
// briefly unreachable database) makes events arrive faster than the log
// takes them, so the queue overflows and events of calls that already
// happened are dropped for good. Under audit.required that is exactly
// "an operation that could not be audited". Before issue 14's follow-up
// that stuck: the sink stayed broken. Now the first append that succeeds
// clears the refusal, calls flow again, and the log itself holds nothing
// that says events are missing: a silent gap that audit.required was
// meant to rule out.
func TestAttackAuditRefusalClearsAfterEventsWereLost(t *testing.T) {
	lg := &flakyLog{down: true}
	a := &auditSink{lg: lg, log: slog.New(slog.DiscardHandler), ch: make(chan audit.Event, auditQueue),
		full: make(chan struct{}, 1), closing: make(chan struct{}), required: true}
	a.wg.Add(1)
	go func() { defer a.wg.Done(); a.run() }()
	h := a.hooks()
	n := int64(0)
	for range auditQueue + 1000 {
		n++
		a.record(audit.Event{Op: audit.OpCall, Outcome: audit.Allowed, Count: n})
	}
	if a.dropped.Load() == 0 {
		t.Fatal("harness: nothing was dropped")
	}
	lg.set(false)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		lg.mu.Lock()
		got := len(lg.got)
		lg.mu.Unlock()
		if got > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	verdict := h.Call(gate.CallInfo{})
	dropped := a.dropped.Load()
	lg.mu.Lock()
	got := len(lg.got)
	lg.mu.Unlock()
	a.close()
	if verdict.Kind == gate.Allow {
		t.Fatalf("%d events were lost for good (the log holds %d of %d, and no event marks the gap), yet audit.required allows calls again", dropped, got, n)
	}
}
