// Package audittest is the contract test suite every audit log passes:
// the files under $MCPSEAL_HOME/audit and the fleet's database
// (pgstate). One suite, run against each, so that `audit verify` means
// the same wherever the log is kept.
package audittest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/audit"
)

// A Writer appends to the log under test; several may share one log.
type Writer interface {
	AppendAll([]audit.Event) error
}

// A Backing is one fresh log.
type Backing interface {
	// Writer returns a new writer on the log (its own connection or
	// file handle, like another replica or process).
	Writer(t *testing.T) Writer
	Verify(t *testing.T) *audit.Report
	Tail(t *testing.T, n int) []audit.Event
	// The hand edits of someone with write access to the store.
	EditLine(t *testing.T, seq int64)
	DeleteLine(t *testing.T, seq int64)
	// CutEnd removes the last n lines, leaving the head as it was.
	CutEnd(t *testing.T, n int)
}

// Run runs the suite; New makes a fresh log.
func Run(t *testing.T, New func(t *testing.T) Backing) {
	for _, c := range []struct {
		name string
		f    func(*testing.T, Backing)
	}{
		{"AppendTailVerify", testAppendTailVerify},
		{"ManyWritersOneChain", testManyWriters},
		{"EditedLineFailsVerify", testEditedLine},
		{"DeletedLineFailsVerify", testDeletedLine},
		{"CutEndFailsVerifyAndIsRecorded", testCutEnd},
		{"InvalidEventWritesNothing", testInvalidEvent},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.f(t, New(t))
		})
	}
}

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func call(i int) audit.Event {
	return audit.Event{Time: t0.Add(time.Duration(i) * time.Millisecond), Op: audit.OpCall, Outcome: audit.Allowed,
		Server: "0123456789abcdef", Label: "alpha", Tool: fmt.Sprintf("tool_%d", i), Count: int64(i)}
}

func appendAll(t *testing.T, w Writer, es ...audit.Event) {
	t.Helper()
	if err := w.AppendAll(es); err != nil {
		t.Fatalf("AppendAll: %v", err)
	}
}

func wantOK(t *testing.T, b Backing, events int64) {
	t.Helper()
	rep := b.Verify(t)
	if !rep.OK() || rep.Events != events {
		t.Fatalf("Verify: %d events, faults %+v; want %d events and no fault", rep.Events, rep.Faults, events)
	}
}

func wantFault(t *testing.T, b Backing) {
	t.Helper()
	if rep := b.Verify(t); rep.OK() {
		t.Fatalf("Verify found nothing (%d events)", rep.Events)
	}
}

func testAppendTailVerify(t *testing.T, b Backing) {
	wantOK(t, b, 0)
	w := b.Writer(t)
	appendAll(t, w, call(1), call(2))
	appendAll(t, w, call(3))
	wantOK(t, b, 3)
	tail := b.Tail(t, 2)
	if len(tail) != 2 || tail[0].Seq != 2 || tail[1].Seq != 3 || tail[1].Tool != "tool_3" {
		t.Fatalf("Tail(2) = %+v", tail)
	}
}

// testManyWriters: four writers (replicas) append at once; every event
// lands in one chain with no gap.
func testManyWriters(t *testing.T, b Backing) {
	const writers, batches, per = 4, 10, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches)
	for i := range writers {
		w := b.Writer(t)
		wg.Go(func() {
			for j := range batches {
				es := make([]audit.Event, per)
				for k := range es {
					es[k] = call(i*1000 + j*10 + k)
				}
				if err := w.AppendAll(es); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	wantOK(t, b, writers*batches*per)
}

func testEditedLine(t *testing.T, b Backing) {
	appendAll(t, b.Writer(t), call(1), call(2), call(3))
	b.EditLine(t, 2)
	wantFault(t, b)
}

func testDeletedLine(t *testing.T, b Backing) {
	appendAll(t, b.Writer(t), call(1), call(2), call(3))
	b.DeleteLine(t, 2)
	wantFault(t, b)
}

func testCutEnd(t *testing.T, b Backing) {
	w := b.Writer(t)
	appendAll(t, w, call(1), call(2), call(3))
	b.CutEnd(t, 2)
	wantFault(t, b)
	// The next append records the gap, so the cut stays on record.
	appendAll(t, w, call(4))
	tail := b.Tail(t, 2)
	if len(tail) != 2 || tail[0].Op != audit.OpGap {
		t.Fatalf("after a cut, Tail = %+v, want a gap event first", tail)
	}
	wantFault(t, b)
}

func testInvalidEvent(t *testing.T, b Backing) {
	w := b.Writer(t)
	if err := w.AppendAll([]audit.Event{call(1), {Op: "exfiltrate", Outcome: audit.Allowed}}); err == nil {
		t.Fatal("an unknown operation was written")
	}
	wantOK(t, b, 0)
}
