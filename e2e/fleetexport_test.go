package e2e

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/siem"
)

// TestFleetAuditExportThroughTheGateway: two gateway replicas on one
// database ship the fleet's audit log to a signed webhook that is down
// while they make calls, then returns; `audit ship --state` drains what
// is left. The receiver has every row of the database's chain, byte for
// byte, first arrivals in chain order.
func TestFleetAuditExportThroughTheGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sink := &hookSink{down: true, key: []byte(strings.Repeat("k", 32))}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	export := writeHookExport(t, dir, sink, srv.URL, "")
	file := t.TempDir() + "/defs.json"
	baseDefs().write(t, file)
	dsn := pgtestMigrated(t)
	gs := make([]*gateway, 2)
	var wg sync.WaitGroup
	for i := range gs {
		wg.Go(func() {
			gs[i] = startGateway(t, home(t), sdkRoute(file), "--state", dsn, "--audit-export", export)
		})
	}
	wg.Wait()
	for _, g := range gs {
		if g == nil {
			t.FailNow()
		}
		cs, err := g.connect("sdk", legacy)
		if err != nil {
			t.Fatal(err)
		}
		useSession(t, cs, []string{"add", "echo"})
		cs.Close()
	}
	waitAudit(t, dsn, "call", 2)
	sink.set(false)
	for _, g := range gs {
		g.stop()
	}
	if out, errOut, code := mcpseal(t, home(t), "audit", "ship", "--state", dsn, "--audit-export", export, "--timeout", "30s"); code != 0 {
		t.Fatalf("audit ship --state: %d\n%s%s", code, out, errOut)
	}
	rows := map[int64][]byte{}
	r := query(t, dsn, `SELECT seq, line FROM mcpseal_audit_events ORDER BY seq`)
	for r.Next() {
		var seq int64
		var line []byte
		if err := r.Scan(&seq, &line); err != nil {
			t.Fatal(err)
		}
		rows[seq] = line
	}
	r.Close()
	sink.mu.Lock()
	lines, err := siem.ParseCopy(bytes.Join(sink.bodies, []byte("\n")))
	sink.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	var last int64
	for _, l := range lines {
		e, err := audit.ParseLine(l)
		if err != nil {
			t.Fatal(err)
		}
		if seen[e.Seq] {
			continue
		}
		if e.Seq != last+1 || !bytes.Equal(rows[e.Seq], l) {
			t.Fatalf("event %d (after %d) is not the database's next row", e.Seq, last)
		}
		seen[e.Seq], last = true, e.Seq
	}
	if len(rows) == 0 || len(seen) != len(rows) {
		t.Fatalf("the receiver has %d of the %d events", len(seen), len(rows))
	}
	c := query(t, dsn, `SELECT seq FROM mcpseal_audit_cursors WHERE sink = 'hook'`)
	cursor, err := pgx.CollectExactlyOneRow(c, pgx.RowTo[int64])
	if err != nil || cursor != int64(len(rows)) {
		t.Fatalf("the database's cursor is %d (%v), want %d", cursor, err, len(rows))
	}

	// The receiver's copy checked against the database, bounded by the
	// sink's cursor there: whole, it verifies; without its last event it
	// verifies only within its own bounds.
	copyFile := filepath.Join(dir, "copy.jsonl")
	write := func(ls [][]byte) {
		if err := os.WriteFile(copyFile, append(bytes.Join(ls, []byte("\n")), '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(lines)
	if out, errOut, code := mcpseal(t, home(t), "audit", "verify", "--stream", copyFile, "--state", dsn, "--sink", "hook"); code != 0 || !strings.Contains(out, "stream copy ok") {
		t.Fatalf("verify --stream --state --sink: %d\n%s%s", code, out, errOut)
	}
	var short [][]byte
	for _, l := range lines {
		if e, _ := audit.ParseLine(l); e.Seq != int64(len(rows)) {
			short = append(short, l)
		}
	}
	write(short)
	if out, errOut, code := mcpseal(t, home(t), "audit", "verify", "--stream", copyFile, "--state", dsn); code != 0 {
		t.Fatalf("the short copy within its own bounds: %d\n%s%s", code, out, errOut)
	}
	if out, _, code := mcpseal(t, home(t), "audit", "verify", "--stream", copyFile, "--state", dsn, "--sink", "hook"); code != 1 || !strings.Contains(out, "fault: gap") {
		t.Fatalf("the copy without its last event, bounded by the database's cursor: %d\n%s", code, out)
	}
}

// pgtestMigrated is a fresh migrated database, as fleet() makes one.
func pgtestMigrated(t *testing.T) string {
	t.Helper()
	_, dsn := fleet(t, 0, "")
	return dsn
}
