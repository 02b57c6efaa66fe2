package siem

import (
	"bytes"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/audit"
)

// shipAll ships a 700-event log to a healthy webhook and returns the
// receiver's batch bodies, one per line.
func shipAll(t *testing.T) (string, [][]byte) {
	t.Helper()
	home, lg := newLog(t, 300)
	recv := &webhookReceiver{}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	ex, err := Start(home, webhookConfig(srv.URL, DefaultSpoolEvents), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	appendEvents(t, lg, 400)
	ex.Kick()
	if err := ex.Ship(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	bodies := bytes.Split(bytes.TrimSpace(recv.copy()), []byte("\n"))
	if len(bodies) < 3 {
		t.Fatalf("%d batches; need at least 3", len(bodies))
	}
	return home, bodies
}

// TestAttackRotationPrunesUnshippedEventsSpoolNotFull: the package doc
// (and docs/observability.md) say the spool is full when "rotation pruned
// events it never took", so audit.required then refuses calls. With a
// policy's small rotation (or spool_events above what rotation keeps) and
// the sink down, rotation deletes events the sink never took and Full()
// stays false: calls go on, the SIEM has lost events forever.
func TestAttackRotationPrunesUnshippedEventsSpoolNotFull(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	lg, err := audit.Open(home, audit.Options{MaxFileBytes: 16 << 10, MaxFiles: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	appendEvents(t, lg, 10)
	recv := &webhookReceiver{fail: 1 << 30}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	ex, err := Start(home, webhookConfig(srv.URL, 100000), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	for range 20 {
		appendEvents(t, lg, 100)
	}
	_, earliest, err := audit.ReadAfter(home, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if earliest <= 1 {
		t.Fatalf("rotation pruned nothing (earliest %d); the test needs it to", earliest)
	}
	time.Sleep(300 * time.Millisecond) // several polls: checkSpool runs on each
	if !ex.Full() {
		t.Fatalf("rotation pruned events 1..%d the sink never took, and the spool is not full: audit.required lets calls through", earliest-1)
	}
}
