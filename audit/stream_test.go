package audit

import (
	"bytes"
	"testing"
)

// prunedCopy returns a home whose log pruned its oldest files, and a
// receiver's copy of every event (taken as they were written).
func prunedCopy(t *testing.T) (string, []Line) {
	t.Helper()
	l, home := openTest(t, Options{MaxFileBytes: 4 << 10, MaxFiles: 2})
	var all []Line
	for round := range 12 {
		appendN(t, l, 10)
		lines, _, err := ReadAfter(home, int64(len(all)), 1000)
		if err != nil {
			t.Fatal(err)
		}
		if round > 0 && len(lines) > 0 && lines[0].Seq != int64(len(all))+1 {
			t.Fatalf("round %d: the copy misses events before %d", round, lines[0].Seq)
		}
		all = append(all, lines...)
	}
	if _, earliest, _ := ReadAfter(home, 0, 1); earliest < 20 {
		t.Fatalf("the log pruned too little (earliest %d)", earliest)
	}
	return home, all
}

func raws(lines []Line) [][]byte {
	out := make([][]byte, len(lines))
	for i, l := range lines {
		out[i] = l.Raw
	}
	return out
}

// rechain rewrites lines from index i on (its outcome) and chains the
// rest to it, as a forger who controls the copy would.
func rechain(t *testing.T, lines []Line, i int) [][]byte {
	t.Helper()
	out := raws(lines[:i])
	prev := lines[i].Prev
	for j := i; j < len(lines); j++ {
		e, err := parseLine(lines[j].Raw)
		if err != nil {
			t.Fatal(err)
		}
		if j == i {
			if e.Outcome == Allowed {
				e.Outcome = Refused
			} else {
				e.Outcome = Allowed
			}
		}
		p, err := prepare(e, e.Seq, prev)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := encode(&p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, raw)
		prev = lineHash(raw)
	}
	return out
}

// TestAttackRewrittenPrunedCopyVerifies: the receiver's copy holds events
// the local log pruned. A forger rewrites one of them and chains every
// later pruned event to it, stopping where the local log's events begin:
// by its own chain the copy is sound. The local log kept the hash of the
// last event each prune deleted (the prune record's anchor) and of the
// event before its first (its prev): the rewrite no longer matches them.
func TestAttackRewrittenPrunedCopyVerifies(t *testing.T) {
	t.Parallel()
	home, all := prunedCopy(t)
	_, earliest, err := ReadAfter(home, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := CheckStream(home, raws(all))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Unavailable == 0 || rep.Unanchored != 0 {
		t.Fatalf("the faithful copy: %+v", rep)
	}
	pruned := all[:earliest-1]
	forged := rechain(t, pruned, 3)
	rep, err = CheckStream(home, forged)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		t.Fatalf("a rewritten, re-chained copy of pruned events verifies: %+v", rep)
	}
	if f := rep.Faults[0]; f.Reason != "rewrite" || f.Seq >= earliest {
		t.Fatalf("want a rewrite of a pruned event, got %+v", rep.Faults)
	}
}

// TestAttackCopyMissingFirstOrLastBatch: a receiver (or someone on the
// way) drops the copy's first or its last acknowledged batch. By its own
// bounds the shorter copy verifies; with the bounds the sink's cursor
// gives (--sink) or --from/--to, it is a gap.
func TestAttackCopyMissingFirstOrLastBatch(t *testing.T) {
	t.Parallel()
	l, home := openTest(t, Options{})
	appendN(t, l, 40)
	lines, _, err := ReadAfter(home, 0, 100)
	if err != nil || len(lines) != 40 {
		t.Fatal(len(lines), err)
	}
	for _, c := range []struct {
		name string
		copy []Line
	}{
		{"missing first", lines[10:]},
		{"missing last", lines[:30]},
		{"missing both", lines[10:30]},
		{"empty", nil},
	} {
		if rep, err := CheckStream(home, raws(c.copy)); err != nil || !rep.OK() {
			t.Fatalf("%s: within its own bounds: %+v %v", c.name, rep, err)
		}
		rep, err := CheckStreamWithin(home, raws(c.copy), StreamBounds{From: 1, To: 40})
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() || rep.Faults[0].Reason != "gap" {
			t.Errorf("%s: with bounds 1 to 40: %+v", c.name, rep)
		}
	}
	rep, err := CheckStreamWithin(home, raws(lines), StreamBounds{From: 1, To: 40})
	if err != nil || !rep.OK() {
		t.Fatalf("the whole copy within 1 to 40: %+v %v", rep, err)
	}
	// Events past To are not acknowledged yet: no fault.
	if rep, err := CheckStreamWithin(home, raws(lines), StreamBounds{From: 1, To: 35}); err != nil || !rep.OK() {
		t.Fatalf("a copy past the cursor: %+v %v", rep, err)
	}
}

// FuzzCheckStreamWithin: whatever a receiver's copy holds and whatever
// bounds are asked, the check never panics, reports at most
// maxStreamFaults faults, and never calls a copy faithful when it differs
// from the local chain's lines.
func FuzzCheckStreamWithin(f *testing.F) {
	l, home := openTest(f, Options{MaxFileBytes: 4 << 10, MaxFiles: 2})
	for range 6 {
		appendN(f, l, 10)
	}
	lines, _, err := ReadAfter(home, 0, 1000)
	if err != nil || len(lines) == 0 {
		f.Fatal(len(lines), err)
	}
	whole := bytes.Join(raws(lines), []byte("\n"))
	f.Add(whole, int64(0), int64(0))
	f.Add(whole, int64(1), int64(60))
	f.Add(bytes.Join(raws(lines[3:]), []byte("\n")), int64(1), int64(0))
	f.Add([]byte(`{"v":1,"seq":5,"op":"prune"}`), int64(0), int64(9))
	f.Fuzz(func(t *testing.T, data []byte, from, to int64) {
		rep, err := CheckStreamWithin(home, bytes.Split(data, []byte("\n")), StreamBounds{From: from, To: to})
		if err != nil {
			return
		}
		if len(rep.Faults) > maxStreamFaults {
			t.Fatalf("%d faults", len(rep.Faults))
		}
		if !rep.OK() {
			return
		}
		local := map[int64][]byte{}
		for _, l := range lines {
			local[l.Seq] = l.Raw
		}
		for _, raw := range bytes.Split(data, []byte("\n")) {
			seq, _ := peekSeq(raw)
			if want, ok := local[seq]; ok && !bytes.Equal(want, raw) {
				t.Fatalf("a copy whose event %d differs from the local line verified", seq)
			}
		}
	})
}
