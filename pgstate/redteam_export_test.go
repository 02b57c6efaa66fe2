package pgstate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/pgstate"
	"github.com/mcpseal/mcpseal/siem"
)

// TestAttackDeletedFirstRowsPassStreamCheckAsPruned: the events 1..6 were
// shipped to the SIEM; then whoever can write the database deletes rows
// 1..3 of mcpseal_audit_events (the database log is never pruned, says
// the change). `audit verify --stream COPY --state URL --sink NAME` should
// find that the fleet's log no longer holds events the receiver has (a
// "missing" fault, as for a removal in the middle). It takes min(seq) as
// the log's "earliest", files the three as "pruned here by rotation"
// (Unavailable), ties them to row 4's prev as if it were a prune anchor,
// and the check passes.
func TestAttackDeletedFirstRowsPassStreamCheckAsPruned(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	d := openDB(t, dsn)
	appendFleet(t, d.Audit(), 6, "one")
	x := d.AuditExport()
	lines, _, err := x.ReadAfter(0, 100)
	if err != nil || len(lines) != 6 {
		t.Fatal(len(lines), err)
	}
	copyLines := make([][]byte, len(lines))
	for i, l := range lines {
		copyLines[i] = l.Raw
	}
	// Sanity: the faithful copy verifies against the intact database.
	if rep, err := audit.CheckStreamOf(x, copyLines, audit.StreamBounds{From: 1, To: 6}); err != nil || !rep.OK() {
		t.Fatalf("faithful copy, intact log: %+v %v", rep, err)
	}
	for _, seq := range []int{1, 2, 3} {
		exec(t, dsn, `DELETE FROM mcpseal_audit_events WHERE seq = $1`, seq)
	}
	rep, err := audit.CheckStreamOf(x, copyLines, audit.StreamBounds{From: 1, To: 6})
	if err != nil {
		t.Fatal(err)
	}
	if vr, err := d.VerifyAudit(context.Background()); err == nil {
		t.Logf("verify --state after the deletion: %d faults %v, notes %v", len(vr.Faults), vr.Faults, vr.Notes)
	}
	if rep.OK() {
		t.Fatalf("rows 1..3 deleted from the never-pruned database log, yet the stream check passes (unavailable=%d, as if pruned by rotation): %+v", rep.Unavailable, rep)
	}
}

// TestAttackCursorRowPastHeadSilencesExport: whoever can write the
// database sets a sink's cursor row to seq 1,000,000 with a well-formed
// hash. No such event exists (the head is 3). The cursor is read as
// valid, the backlog is max(head-cursor, 0) = 0, the spool is never full,
// and every event the fleet appends afterwards is skipped: the SIEM gets
// nothing and audit.required keeps allowing calls. The row's hash is not
// the line hash of any event at that seq, which the source could check
// (the database holds the chain), as it checks a malformed row.
func TestAttackCursorRowPastHeadSilencesExport(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	d := openDB(t, dsn)
	appendFleet(t, d.Audit(), 3, "one")
	x := d.AuditExport()
	if ok, err := x.Lead("hook"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	exec(t, dsn, `UPDATE mcpseal_audit_cursors SET seq = 1000000, hash = $1 WHERE sink = 'hook'`, audit.LineHash([]byte("forged")))
	hook := &flakyHook{}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	ex, err := siem.StartFrom(x, hookConfig(srv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	appendFleet(t, d.Audit(), 5, "two")
	time.Sleep(1500 * time.Millisecond)
	got := len(hook.lines(t))
	if got == 0 && !ex.Full() {
		t.Fatalf("a cursor row past the head (head 8, cursor 1000000) silences the sink: 0 events shipped, spool not full, backlog %v", ex.Backlog())
	}
}

// TestAttackLeaseStolenMidBatch (holds): replica A leads and starts a
// batch; it stalls past its lease (simulated by expiring the row), B takes
// the lease and moves the cursor to 8; A wakes and tries to move the
// cursor to 5 (backwards, a gap-maker if it won) or to 10 (past what B
// acknowledged). Both are refused; B may not move it backwards either.
func TestAttackLeaseStolenMidBatch(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	d := openDB(t, dsn)
	appendFleet(t, d.Audit(), 10, "one")
	rows := rowsOf(t, dsn)
	a, b := d.AuditExport(), d.AuditExport()
	if ok, err := a.Lead("s"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, _ := b.Lead("s"); ok {
		t.Fatal("two replicas lead one sink")
	}
	exec(t, dsn, `UPDATE mcpseal_audit_cursors SET lease_until = now() - interval '1 second' WHERE sink = 's'`)
	if ok, err := b.Lead("s"); !ok || err != nil {
		t.Fatal("B did not take the expired lease", ok, err)
	}
	if err := b.SetCursor("s", 8, audit.LineHash(rows[8])); err != nil {
		t.Fatal(err)
	}
	if err := a.SetCursor("s", 5, audit.LineHash(rows[5])); err == nil {
		t.Fatal("the replica that lost its lease moved the cursor back")
	}
	if err := a.SetCursor("s", 10, audit.LineHash(rows[10])); err == nil {
		t.Fatal("the replica that lost its lease moved the cursor")
	}
	if err := b.SetCursor("s", 3, audit.LineHash(rows[3])); err == nil {
		t.Fatal("the holder moved the cursor backwards")
	}
	if ok, _ := a.Lead("s"); ok {
		t.Fatal("A took B's live lease back")
	}
	if seq, _, err := a.Cursor("s"); seq != 8 || err != nil {
		t.Fatal(seq, err)
	}
}

// TestAttackSameSinkNameOtherReceiverDivertsFleetStream: one replica's
// audit-export.json (a local file writer on one machine, or a config
// rolled out to half the fleet) names sink "hook" but points it at
// another webhook. The cursor row is keyed by the name alone, so whichever
// replica holds the lease ships the whole fleet's log to its receiver and
// moves the one shared cursor: the real SIEM never gets those events, and
// every other replica sees backlog 0 and a spool that is not full. In the
// file model the cursor was per home; here one replica's config diverts
// every replica's events.
func TestAttackSameSinkNameOtherReceiverDivertsFleetStream(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	d := openDB(t, dsn)
	appendFleet(t, d.Audit(), 20, "one")
	real, rogue := &flakyHook{}, &flakyHook{}
	realSrv, rogueSrv := httptest.NewServer(real), httptest.NewServer(rogue)
	defer realSrv.Close()
	defer rogueSrv.Close()
	exRogue, err := siem.StartFrom(openDB(t, dsn).AuditExport(), hookConfig(rogueSrv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer exRogue.Close()
	deadline := time.Now().Add(10 * time.Second)
	for len(rogue.lines(t)) < 20 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	exReal, err := siem.StartFrom(openDB(t, dsn).AuditExport(), hookConfig(realSrv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer exReal.Close()
	time.Sleep(1500 * time.Millisecond)
	t.Logf("rogue receiver: %d events; real receiver: %d; the real replica's backlog %v, full %v",
		len(rogue.lines(t)), len(real.lines(t)), exReal.Backlog(), exReal.Full())
	if len(real.lines(t)) == 0 && !exReal.Full() {
		t.Fatalf("another receiver under the same sink name took the fleet's 20 events; the configured receiver got none and its replica reports backlog %v, spool not full", exReal.Backlog())
	}
}

// downHook refuses every batch: the receiver as one replica sees it when
// that replica cannot reach it (a partition, a firewall on its host).
type downHook struct{ n int }

func (h *downHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "unreachable from this replica", http.StatusServiceUnavailable)
}

// TestAttackReplicaThatCannotShipKeepsLease: replica A cannot reach the
// SIEM (every batch fails fast); replica B can. The docs say a replica
// that dies stops renewing and another takes over; but A is alive: it
// renews the lease before every attempt, and every audit append of its
// own sessions kicks its shipper (runaudit.go), cutting the backoff short,
// so the lease never runs out. After more than a lease (30 s) B has
// shipped nothing; the fleet's backlog grows until the spool is full and,
// under audit.required, every replica refuses calls, although B could
// ship. One partitioned (or hostile) replica stalls the fleet's stream.
func TestAttackReplicaThatCannotShipKeepsLease(t *testing.T) {
	if testing.Short() {
		t.Skip("waits past a lease")
	}
	t.Parallel()
	dsn := freshDB(t)
	d := openDB(t, dsn)
	appendFleet(t, d.Audit(), 10, "one")
	downSrv := httptest.NewServer(&downHook{})
	defer downSrv.Close()
	good := &flakyHook{}
	goodSrv := httptest.NewServer(good)
	defer goodSrv.Close()
	exA, err := siem.StartFrom(openDB(t, dsn).AuditExport(), hookConfig(downSrv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	var closeA sync.Once
	defer closeA.Do(func() { exA.Close() })
	time.Sleep(300 * time.Millisecond) // A leads first
	exB, err := siem.StartFrom(openDB(t, dsn).AuditExport(), hookConfig(goodSrv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer exB.Close()
	stop := make(chan struct{})
	var stopOnce sync.Once
	defer stopOnce.Do(func() { close(stop) })
	go func() { // A's sessions keep appending (each append kicks A's shipper)
		tk := time.NewTicker(200 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				exA.Kick()
			}
		}
	}()
	deadline := time.Now().Add(pgstate.ExportLease + 10*time.Second)
	for time.Now().Before(deadline) {
		if len(good.lines(t)) > 0 {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	backlog := exB.Backlog()
	// Sanity: B ships as soon as A gives the lease up (closes).
	stopOnce.Do(func() { close(stop) })
	closeA.Do(func() { exA.Close() })
	took := false
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && !took; time.Sleep(100 * time.Millisecond) {
		took = len(good.lines(t)) > 0
	}
	t.Fatalf("after %v (a lease is %v) the replica that can reach the SIEM shipped nothing: the one that cannot still holds the lease; backlog %v (once A closed, B shipped: %v)",
		pgstate.ExportLease+10*time.Second, pgstate.ExportLease, backlog, took)
}
