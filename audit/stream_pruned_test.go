package audit

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAttackOldestFileDeletedPassesStreamCheckAsPruned: the file log's
// equivalent of rows deleted from the database log. The receiver holds
// every event; then whoever can write $MCPSEAL_HOME deletes the oldest
// rotated file by hand, with no prune record for it. The events it held
// are not "pruned here by rotation" (Unavailable): no prune record
// accounts for them, so the stream check reports them missing, as
// verify does for the log itself.
func TestAttackOldestFileDeletedPassesStreamCheckAsPruned(t *testing.T) {
	t.Parallel()
	l, home := openTest(t, Options{MaxFileBytes: 4 << 10, MaxFiles: 100})
	appendN(t, l, 120)
	all, _, err := ReadAfter(home, 0, 1000)
	if err != nil || len(all) != 120 {
		t.Fatal(len(all), err)
	}
	if rep, err := CheckStreamWithin(home, raws(all), StreamBounds{From: 1, To: 120}); err != nil || !rep.OK() {
		t.Fatalf("faithful copy, intact log: %+v %v", rep, err)
	}
	files, err := rotatedFiles(Dir(home))
	if err != nil || len(files) < 2 {
		t.Fatalf("the log did not rotate: %d files, %v", len(files), err)
	}
	if err := os.Remove(filepath.Join(Dir(home), files[0].name)); err != nil {
		t.Fatal(err)
	}
	rep, err := CheckStreamWithin(home, raws(all), StreamBounds{From: 1, To: 120})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Unavailable != 0 || rep.Faults[0].Reason != "missing" {
		t.Fatalf("the oldest file deleted without a prune record passes the stream check as pruned: %+v", rep)
	}
}

// TestPrunedCopyStillVerifies: events a prune record accounts for are
// Unavailable, not missing.
func TestPrunedCopyStillVerifies(t *testing.T) {
	t.Parallel()
	home, all := prunedCopy(t)
	rep, err := CheckStreamWithin(home, raws(all), StreamBounds{From: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Unavailable == 0 {
		t.Fatalf("a copy of a pruned log: %+v", rep)
	}
}
