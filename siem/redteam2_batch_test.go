package siem

import (
	"testing"

	"github.com/mcpseal/mcpseal/audit"
)

// TestAttackBatchInteriorNotChained: batchEvents checks the envelope
// against the first and last events and the count only. A batch mcpseal
// sent as [1,2,3] rewritten at the receiver as [1,1,3] (event 2 replaced
// by a repeat of 1: the SIEM's index of that batch has no event 2) keeps
// count 3, first 1, last 3, prev of 1 and hash of 3, and verifies as long
// as event 2 is somewhere else in the copy (a resend). mcpseal never sends
// a batch whose events are not consecutive and chained.
func TestAttackBatchInteriorNotChained(t *testing.T) {
	home, _ := newLog(t, 3)
	ls := rt16Lines(t, home, 3)
	forged := encodeBatch("hook", []audit.Line{ls[0], ls[0], ls[2]})
	copyText := string(forged) + "\n" + string(encodeBatch("hook", ls[1:2]))
	if rt16bVerifies(t, home, copyText) {
		t.Errorf("a batch whose events are 1,1,3 under an envelope for 1..3 verifies")
	}
}
