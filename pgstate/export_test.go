package pgstate_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/pgstate"
	"github.com/mcpseal/mcpseal/siem"
)

// flakyHook is a webhook that refuses the first fail batches, then stores
// lose batches without acknowledging them, then works.
type flakyHook struct {
	mu     sync.Mutex
	fail   int
	lose   int
	bodies [][]byte
}

func (h *flakyHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail > 0 {
		h.fail--
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	h.bodies = append(h.bodies, body)
	if h.lose > 0 {
		h.lose--
		http.Error(w, "stored, but the answer is lost", http.StatusInternalServerError)
	}
}

func (h *flakyHook) lines(t *testing.T) [][]byte {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	lines, err := siem.ParseCopy(bytes.Join(h.bodies, []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func hookConfig(url string) *siem.Config {
	return &siem.Config{SpoolEvents: siem.DefaultSpoolEvents, Sinks: []siem.SinkConfig{{Name: "hook", Type: "webhook", URL: url, HMACKey: []byte("0123456789abcdef0123456789abcdef")}}}
}

func appendFleet(t *testing.T, w *pgstate.AuditLog, n int, label string) {
	t.Helper()
	for i := range n {
		if err := w.AppendAll([]audit.Event{{Op: audit.OpCall, Outcome: audit.Allowed, Server: "3f9a0c1d2b4e5f60", Label: label, Tool: "echo", Bytes: int64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
}

// rowsOf returns the database's audit lines by seq.
func rowsOf(t *testing.T, dsn string) map[int64][]byte {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT seq, line FROM mcpseal_audit_events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64][]byte{}
	for rows.Next() {
		var seq int64
		var line []byte
		if err := rows.Scan(&seq, &line); err != nil {
			t.Fatal(err)
		}
		out[seq] = line
	}
	return out
}

// checkCopy: every row arrived, byte for byte, first arrivals in chain
// order, repeats identical; it returns the number of repeats.
func checkCopy(t *testing.T, lines [][]byte, rows map[int64][]byte) int {
	t.Helper()
	seen := map[int64][]byte{}
	var last int64
	dups := 0
	for _, l := range lines {
		e, err := audit.ParseLine(l)
		if err != nil {
			t.Fatalf("the receiver got a line that is not an event: %v", err)
		}
		if prior, ok := seen[e.Seq]; ok {
			if !bytes.Equal(prior, l) {
				t.Fatalf("event %d arrived twice with different bytes", e.Seq)
			}
			dups++
			continue
		}
		if e.Seq != last+1 {
			t.Fatalf("event %d arrived after %d: not in chain order", e.Seq, last)
		}
		last = e.Seq
		seen[e.Seq] = l
		if !bytes.Equal(rows[e.Seq], l) {
			t.Fatalf("event %d differs from the database's row", e.Seq)
		}
	}
	if len(seen) != len(rows) {
		t.Fatalf("the receiver has %d of the %d events", len(seen), len(rows))
	}
	return dups
}

// TestFleetAuditExportWebhookDownThenRecovers: two replicas append to the
// fleet's audit log and both run the export; the webhook refuses, then
// loses an acknowledgement, then recovers. Every event arrives, in chain
// order, byte for byte the database's rows, the lost batch again; the
// cursor is in the database. When the replica that ships exits, the other
// takes the sink over and ships what followed.
func TestFleetAuditExportWebhookDownThenRecovers(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	hook := &flakyHook{fail: 3, lose: 1}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	d1, d2 := openDB(t, dsn), openDB(t, dsn)
	ex1, err := siem.StartFrom(d1.AuditExport(), hookConfig(srv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex1.Close()
	ex2, err := siem.StartFrom(d2.AuditExport(), hookConfig(srv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex2.Close()
	for range 3 {
		appendFleet(t, d1.Audit(), 40, "one")
		appendFleet(t, d2.Audit(), 40, "two")
	}
	if err := ex1.Ship(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := ex2.Ship(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	rows := rowsOf(t, dsn)
	if len(rows) != 240 {
		t.Fatalf("%d rows", len(rows))
	}
	if dups := checkCopy(t, hook.lines(t), rows); dups == 0 {
		t.Error("the batch whose acknowledgement was lost was not sent again")
	}
	x := d1.AuditExport()
	seq, hash, err := x.Cursor("hook")
	if err != nil || seq != 240 || hash != audit.LineHash(rows[240]) {
		t.Fatalf("the database's cursor is %d %q (%v), want 240 and the last line's hash", seq, hash, err)
	}

	// The replica that ships exits; the other takes over.
	ex1.Close()
	ex2.Close()
	ex3, err := siem.StartFrom(d2.AuditExport(), hookConfig(srv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex3.Close()
	appendFleet(t, d1.Audit(), 30, "one")
	if err := ex3.Ship(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	checkCopy(t, hook.lines(t), rowsOf(t, dsn))
}

// TestExportLeaseOneShipperPerSink: while one replica holds a sink's
// lease, another neither ships nor moves the cursor; once the holder gives
// it up, the other takes it.
func TestExportLeaseOneShipperPerSink(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	a, b := openDB(t, dsn).AuditExport(), openDB(t, dsn).AuditExport()
	if ok, err := a.Lead("s"); !ok || err != nil {
		t.Fatalf("the first replica did not get the lease: %v %v", ok, err)
	}
	if ok, err := b.Lead("s"); ok || err != nil {
		t.Fatalf("a second replica took a held lease: %v %v", ok, err)
	}
	// Real events: a cursor whose hash is not its event's line hash is
	// malformed (TestAttackCursorRowPastHeadSilencesExport).
	appendFleet(t, openDB(t, dsn).Audit(), 6, "one")
	rows := rowsOf(t, dsn)
	h := audit.LineHash(rows[5])
	if err := b.SetCursor("s", 5, h); err == nil {
		t.Fatal("a replica without the lease moved the cursor")
	}
	if err := a.SetCursor("s", 5, h); err != nil {
		t.Fatal(err)
	}
	if err := a.SetCursor("s", 4, audit.LineHash(rows[4])); err == nil {
		t.Fatal("the cursor moved back")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Lead("s"); !ok || err != nil {
		t.Fatalf("the lease was not free after its holder closed: %v %v", ok, err)
	}
	if seq, got, err := b.Cursor("s"); seq != 5 || got != h || err != nil {
		t.Fatalf("cursor %d %q %v", seq, got, err)
	}
}

// TestAttackAuditCursorRowEdited: someone with write access sets a sink's
// cursor row to something mcpseal never writes (a hash that is not one, a
// negative seq). It is an error, never read as "nothing shipped" (which
// would resend everything) or as a position: the spool is full.
func TestAttackAuditCursorRowEdited(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	d := openDB(t, dsn)
	appendFleet(t, d.Audit(), 3, "one")
	x := d.AuditExport()
	if ok, err := x.Lead("s"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := x.SetCursor("s", 2, audit.LineHash([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	exec(t, dsn, `UPDATE mcpseal_audit_cursors SET hash = 'not-a-hash' WHERE sink = 's'`)
	if _, _, err := x.Cursor("s"); err == nil {
		t.Fatal("an edited cursor row was read")
	}
	hook := &flakyHook{}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	cfg := hookConfig(srv.URL)
	cfg.Sinks[0].Name = "s"
	ex, err := siem.StartFrom(x, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	if !ex.Full() {
		t.Fatal("an unreadable cursor does not make the spool full")
	}
	time.Sleep(time.Second)
	if len(hook.lines(t)) != 0 {
		t.Fatal("events were shipped from an unreadable cursor")
	}
}

// TestAttackForgedRowPastHeadShipped: a row appended by hand, correctly
// chained, without moving the head, is not yet flagged by any event; the
// stream must not carry it to the SIEM as if it were the fleet's.
func TestAttackForgedRowPastHeadShipped(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	d := openDB(t, dsn)
	appendFleet(t, d.Audit(), 2, "one")
	rows := rowsOf(t, dsn)
	forged, _, err := audit.EncodeAfter([]audit.Event{{Op: audit.OpCall, Outcome: audit.Allowed, Tool: "transfer_funds"}}, 2, audit.LineHash(rows[2]), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	exec(t, dsn, `INSERT INTO mcpseal_audit_events (seq, line) VALUES (3, $1)`, forged[0])
	lines, _, err := d.AuditExport().ReadAfter(0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 {
		t.Fatalf("the stream carries %d events, the forged row past the head among them", len(lines))
	}
	// The next append flags it, and then both go.
	appendFleet(t, d.Audit(), 1, "one")
	lines, _, err = d.AuditExport().ReadAfter(2, 10)
	if err != nil || len(lines) != 3 || !bytes.Contains(lines[1].Raw, []byte(`"rows-past-head"`)) {
		t.Fatalf("after the next append: %d lines, %v", len(lines), err)
	}
}

// TestExportCursorBelongsToItsDestination: the cursor row belongs to the
// destination whose acknowledgment moved it. A replica bound to another
// neither leads nor moves it, and reads it as an error (spool full),
// even once the lease is free; one bound to the same destination takes
// over.
func TestExportCursorBelongsToItsDestination(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	appendFleet(t, openDB(t, dsn).Audit(), 6, "one")
	rows := rowsOf(t, dsn)
	a, b, c := openDB(t, dsn).AuditExport(), openDB(t, dsn).AuditExport(), openDB(t, dsn).AuditExport()
	a.Bind("s", "sha256:"+strings.Repeat("a", 64))
	b.Bind("s", "sha256:"+strings.Repeat("b", 64))
	c.Bind("s", "sha256:"+strings.Repeat("a", 64))
	if ok, err := a.Lead("s"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := a.SetCursor("s", 5, audit.LineHash(rows[5])); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Lead("s"); ok || !errors.Is(err, pgstate.ErrOtherDestination) {
		t.Fatalf("another destination led for the sink: %v %v", ok, err)
	}
	if _, _, err := b.Cursor("s"); !errors.Is(err, pgstate.ErrOtherDestination) {
		t.Fatalf("another destination read the cursor: %v", err)
	}
	if err := b.SetCursor("s", 6, audit.LineHash(rows[6])); err == nil {
		t.Fatal("another destination moved the cursor")
	}
	if ok, err := c.Lead("s"); !ok || err != nil {
		t.Fatal("the same destination did not take over", ok, err)
	}
	if seq, _, err := c.Cursor("s"); seq != 5 || err != nil {
		t.Fatal(seq, err)
	}
}
