package audit

import "testing"

// TestAttackToBoundBelowCopysFirstPasses: the operator asks for every
// event up to seq 10 (`audit verify --stream COPY --to 10`, the flag's
// help: "the copy must hold every event up to seq N"). The receiver's
// copy lost everything up to 20 and holds 21..40. With From left at 0
// (the copy's own first) the requirement becomes 21..10, an empty range,
// and the copy verifies although it holds none of the events 1..10 the
// operator required.
func TestAttackToBoundBelowCopysFirstPasses(t *testing.T) {
	t.Parallel()
	l, home := openTest(t, Options{})
	appendN(t, l, 40)
	lines, _, err := ReadAfter(home, 0, 100)
	if err != nil || len(lines) != 40 {
		t.Fatal(len(lines), err)
	}
	rep, err := CheckStreamWithin(home, raws(lines[20:]), StreamBounds{To: 10})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		t.Fatalf("a copy of 21..40 passes --to 10 although it holds none of the events up to 10: %+v", rep)
	}
}

// TestAttackFromBoundEmptyCopyPasses: `--from 1` requires "every event
// from seq 1 on"; the receiver hands over an empty copy (it lost all of
// it). With To left at 0 the empty copy has no last to bound it and
// verifies, while the local log holds 40 events.
func TestAttackFromBoundEmptyCopyPasses(t *testing.T) {
	t.Parallel()
	l, home := openTest(t, Options{})
	appendN(t, l, 40)
	rep, err := CheckStreamWithin(home, nil, StreamBounds{From: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		t.Fatalf("an empty copy passes --from 1 against a log of 40 events: %+v", rep)
	}
}
