package cli

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/httpgw"
	"github.com/mcpseal/mcpseal/pin"
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
	a := newAuditSink(w, pin.Identity{}, slog.New(slog.DiscardHandler), false)
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
// auditQueue events wait, the one it holds included; the rest are dropped, counted, and the sink is
// broken (so audit.required refuses calls).
func TestAuditSinkDropsBeyondItsQueue(t *testing.T) {
	t.Parallel()
	w := &memWriter{block: make(chan struct{})}
	a := newAuditSink(w, pin.Identity{}, slog.New(slog.DiscardHandler), true)
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
	// The event the writer holds counts against the queue's bound.
	if got := a.dropped.Load(); got != 11 {
		t.Errorf("%d events dropped, want 11", got)
	}
	if v := a.hooks().Call(gate.CallInfo{}); v.Kind != gate.Refuse {
		t.Errorf("calls allowed after events were dropped under audit.required: %+v", v)
	}
	close(w.block)
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	written, gap := 0, int64(0)
	for _, b := range w.batches {
		for _, ev := range b {
			if ev.Op == audit.OpGap {
				gap += ev.Count
			} else {
				written++
			}
		}
	}
	if written != auditQueue || gap != 11 {
		t.Errorf("%d events written and a gap of %d, want %d and 11", written, gap, auditQueue)
	}
}

// flakyLog fails every append while down is set, and records what it
// took otherwise.
type flakyLog struct {
	mu    sync.Mutex
	down  bool
	tries int
	got   []audit.Event
}

func (f *flakyLog) AppendAll(evs []audit.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries++
	if f.down {
		return errors.New("connection refused")
	}
	f.got = append(f.got, evs...)
	return nil
}

func (f *flakyLog) Close() error { return nil }

func (f *flakyLog) set(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

// TestAuditOutageLosesNothing: the audit log goes away (a database
// stopped) during traffic and comes back. The batches it refused are
// written once it is back, first and in order; audit.required refuses
// calls while it is away and allows them again once an append succeeds.
func TestAuditOutageLosesNothing(t *testing.T) {
	t.Parallel()
	lg := &flakyLog{}
	a := newAuditSink(lg, pin.Identity{}, slog.New(slog.DiscardHandler), true)
	h := a.hooks()
	n := int64(0)
	emit := func(k int) {
		for range k {
			n++
			a.record(audit.Event{Op: audit.OpCall, Outcome: audit.Allowed, Count: n})
		}
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	emit(10)
	wait("the first events", func() bool { lg.mu.Lock(); defer lg.mu.Unlock(); return len(lg.got) == 10 })
	lg.set(true)
	emit(300) // more than one batch
	wait("the refusal", func() bool { return h.Call(gate.CallInfo{}).Kind == gate.Refuse })
	wait("a retry", func() bool { lg.mu.Lock(); defer lg.mu.Unlock(); return lg.tries >= 4 })
	lg.set(false)
	wait("the refusal to clear", func() bool { return h.Call(gate.CallInfo{}).Kind == gate.Allow })
	emit(5)
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	if int64(len(lg.got)) != n {
		t.Fatalf("the log holds %d of %d events", len(lg.got), n)
	}
	for i, ev := range lg.got {
		if ev.Count != int64(i+1) {
			t.Fatalf("event %d is #%d: out of order or repeated", i+1, ev.Count)
		}
	}
	if a.dropped.Load() != 0 {
		t.Fatalf("%d events dropped", a.dropped.Load())
	}
}

// TestAuditGivenUpAtExitIsCounted: a log still away when the sink closes
// does not hold the exit; what it could not take is counted as dropped.
func TestAuditGivenUpAtExitIsCounted(t *testing.T) {
	t.Parallel()
	lg := &flakyLog{down: true}
	a := newAuditSink(lg, pin.Identity{}, slog.New(slog.DiscardHandler), true)
	for range 3 {
		a.record(audit.Event{Op: audit.OpCall, Outcome: audit.Allowed})
	}
	start := time.Now()
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("close took %v", d)
	}
	if a.dropped.Load() != 3 {
		t.Fatalf("dropped %d, want 3", a.dropped.Load())
	}
}

// TestTeamGatewayRequiredAuditUnopenableRefusesToStart: a team gateway
// whose host policy requires the audit log does not start when the log
// cannot be opened at all (here $MCPSEAL_HOME is a regular file), rather
// than start and refuse every call later.
func TestTeamGatewayRequiredAuditUnopenableRefusesToStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	polPath := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(polPath, []byte(`{"version": 1, "audit": {"required": true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.WriteFile(home, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	routes, err := httpgw.ParseRoutes([]byte(`{"routes": {"docs": {"url": "https://docs.example.com/mcp"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string {
		if k == "MCPSEAL_HOME" {
			return home
		}
		return ""
	}}
	for _, required := range []bool{true, false} {
		if !required {
			if err := os.WriteFile(polPath, []byte(`{"version": 1, "audit": {"required": false}}`), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		_, err := newIdentityPolicy(e, gatewayFlags{policy: polPath}, routes, slog.New(slog.DiscardHandler))
		var ee *exitError
		if required && (!errors.As(err, &ee) || ee.code != ExitRefused) {
			t.Errorf("audit required, log unopenable: %v, want a refusal to start", err)
		}
		if !required && err != nil {
			t.Errorf("audit not required: %v", err)
		}
	}
}
