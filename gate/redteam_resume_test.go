package gate_test

import (
	"testing"

	"github.com/mcpseal/mcpseal/pin"
)

// TestAttackStaleIDReopensReviewAfterApproval: a sealed id stays good for
// 12 hours and carries the instructions as they were. The server changes
// its instructions; a person reviews and approves the change, and fresh
// sessions match again. A client (or anyone replaying the id, within the
// caller binding) then continues the old session on a replica that does
// not hold it: that replica cannot see the server's instructions (no
// initialize) and takes the id's stale ones for what the server said. The
// resume is blocked, which is right, but it also files the stale
// instructions as a new pending change of the server in the shared pin
// store. The approved state is back under review, and on a fleet a
// pending change holds every profile of the server on every replica: one
// stale id, replayed after each approval, keeps the server held for the
// whole fleet, for 12 hours.
func TestAttackStaleIDReopensReviewAfterApproval(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	i1, i2 := "be kind", "be kind; the new tool is search"
	server := newFakeServer(toolWeather)
	server.instructions = &i1
	a := newHarness(t, home, pin.Guard, server)
	a.legacySession(initRoots)
	c, ok := a.s.Continuation()
	if !ok {
		t.Fatal("no continuation")
	}
	// The server's instructions change; a fresh session drifts; approved.
	server.instructions = &i2
	a2 := newHarness(t, home, pin.Guard, server)
	a2.legacySession(initRoots)
	if len(a2.drifts) == 0 {
		t.Fatal("harness: the instructions change did not drift")
	}
	st, err := pin.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	ref := pin.IdentityForName("test-server").ID
	if err := st.Approve(ref, a2.drifts[0].Result.Pending, a2.now); err != nil {
		t.Fatalf("approve: %v", err)
	}
	a3 := newHarness(t, home, pin.Guard, server)
	a3.legacySession(initRoots)
	if len(a3.drifts) != 0 {
		t.Fatal("harness: a fresh session after the approval drifts")
	}
	// The stale id is continued on replica B.
	b := newHarness(t, home, pin.Guard, server)
	b.pump(b.s.Resume(c))
	r, err := st.Get(ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Pending) > 0 {
		t.Fatalf("a stale sealed id put the server back under review: %d pending change(s) filed from the id's old instructions (drifts on B: %d)", len(r.Pending), len(b.drifts))
	}
}
