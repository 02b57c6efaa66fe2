package pgstate_test

import (
	"testing"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/pin/pintest"
)

// TestAttackStaleInstructionsHoldTheFleet: what a replica continuing a
// stale sealed id does to the shared store (gate's
// TestAttackStaleIDReopensReviewAfterApproval shows the gate filing it):
// the server's instructions changed and the change was approved; the
// continuing replica observes the id's old instructions as the server's
// contract. On the fleet's store that pending change holds every session
// of the server, including fresh sessions showing exactly the approved
// contract, on every replica.
func TestAttackStaleInstructionsHoldTheFleet(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	st := openDB(t, dsn).Pins()
	id := pintest.ID("alpha")
	o := pin.Observation{ClientVersion: "2025-06-18", Protocol: "2025-06-18", Capabilities: []string{"roots"}}
	i1, i2 := "be kind", "be kind; the new tool is search"
	with := func(in string) *contract.Contract {
		c := pintest.Contract(t, "v1")
		return contract.New(c.Defs, &in)
	}
	if res, err := st.Observe(id, o, with(i1), pin.Guard, attackT0); err != nil || res.Outcome != pin.FirstPin {
		t.Fatalf("first pin: %v %v", res.Outcome, err)
	}
	res, err := st.Observe(id, o, with(i2), pin.Guard, attackT0)
	if err != nil || res.Outcome != pin.Drift {
		t.Fatalf("the change: %v %v", res.Outcome, err)
	}
	if err := st.Approve(id.ID, res.Pending, attackT0); err != nil {
		t.Fatal(err)
	}
	if res, err := st.Observe(id, o, with(i2), pin.Guard, attackT0); err != nil || res.Outcome != pin.Match {
		t.Fatalf("after approval: %v %v", res.Outcome, err)
	}
	// The continuing replica, from the stale id: the gate marks what the
	// id carried (gate.Session.Resume), and the store files nothing.
	carried := o
	carried.Carried = true
	if res, err := st.Observe(id, carried, with(i1), pin.Guard, attackT0); err != nil || res.Outcome != pin.Stale {
		t.Fatalf("stale resume: %v %v", res.Outcome, err)
	}
	// A fresh session on any replica, showing the approved contract.
	fresh := openDB(t, dsn).Pins()
	if res, err := fresh.Observe(id, o, with(i2), pin.Guard, attackT0); err != nil || res.Outcome != pin.Match {
		t.Fatalf("a fresh session showing exactly the approved contract is held after one stale id was continued: %v %v", res.Outcome, err)
	}
}
