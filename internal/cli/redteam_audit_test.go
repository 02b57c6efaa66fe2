package cli

import (
	"log/slog"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/pin"
)

// TestAttackAuditRefusalClearsAfterEventsWereLost: a caller (or a slow or
// briefly unreachable database) makes events arrive faster than the log
// takes them, so the queue overflows and events of calls that already
// happened are dropped for good. Under audit.required that is exactly
// "an operation that could not be audited". Before issue 14's follow-up
// that stuck: the sink stayed broken. Now the first append that succeeds
// cleared the refusal, calls flowed again, and the log itself held nothing
// that said events were missing: a silent gap that audit.required was
// meant to rule out. Now the writer logs a gap event counting them before
// anything else, and only then clears the refusal.
func TestAttackAuditRefusalClearsAfterEventsWereLost(t *testing.T) {
	lg := &flakyLog{down: true}
	a := newAuditSink(lg, pin.Identity{}, slog.New(slog.DiscardHandler), true)
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
	a.close()
	lg.mu.Lock()
	defer lg.mu.Unlock()
	got, gap := len(lg.got), int64(-1)
	for i, ev := range lg.got {
		if ev.Op == audit.OpGap {
			if i != 0 {
				t.Errorf("the gap event is event %d of the log, after events written later than the loss", i+1)
			}
			gap = ev.Count
		}
	}
	// Calls may flow again only once the log itself says how many events
	// are missing.
	if verdict.Kind == gate.Allow && gap != dropped {
		t.Fatalf("%d events were lost for good (the log holds %d of %d; its gap event counts %d), yet audit.required allows calls again", dropped, got, n, gap)
	}
}
