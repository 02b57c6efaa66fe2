// Package pintest is the contract test suite every pin store passes: the
// file store under $MCPSEAL_HOME and every pin.Backend (the fleet's
// PostgreSQL store). One suite, run against each: what the gate and the
// review commands may rely on does not depend on where the state is kept.
//
// A store's test calls Run with a Suite whose New makes fresh, empty state
// and returns a Backing: handles on that state (as many as a test wants,
// like replicas or processes) and the hand edits an attacker with write
// access to the state would make.
package pintest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/pin"
)

// A Backing is one store's state, fresh for each test.
type Backing interface {
	// Open returns a new handle on the state, independent of every
	// other one (its own connections, its own locks).
	Open(t *testing.T) *pin.Store
	// EditRecord changes server id's stored record by hand.
	EditRecord(t *testing.T, id string)
	// DeleteEvent removes event seq from the chain by hand.
	DeleteEvent(t *testing.T, seq int64)
	// AppendEvent adds line (without a newline) after the chain's last
	// event by hand.
	AppendEvent(t *testing.T, line []byte)
	// PlantRecord stores data as server id's record, with no event.
	PlantRecord(t *testing.T, id string, data []byte)
	// ReadRecord returns server id's stored record, and WriteRecord
	// replaces it, by hand.
	ReadRecord(t *testing.T, id string) []byte
	WriteRecord(t *testing.T, id string, data []byte)
}

// A Suite describes the store under test.
type Suite struct {
	// New makes fresh, empty state.
	New func(t *testing.T) Backing
	// Fleet is set for a store shared by replicas (pin.OpenBackend): a
	// pending change holds every profile of its server.
	Fleet bool
}

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// Run runs the contract suite, each case in parallel on its own state.
func Run(t *testing.T, s Suite) {
	cases := []struct {
		name string
		f    func(*testing.T, Suite)
	}{
		{"FirstPinThenMatch", testFirstPinThenMatch},
		{"DriftIsPendingAndKept", testDriftIsPendingAndKept},
		{"ReviewThenApproveNamesTheApprover", testReviewThenApprove},
		{"ApproveRefusedWhenPendingMoved", testApproveRefusedWhenMoved},
		{"StrictAwaitsFirstApproval", testStrictAwaitsFirstApproval},
		{"Forget", testForget},
		{"ListGetVerify", testListGetVerify},
		{"ApprovalSeenByEveryHandle", testApprovalSeenByEveryHandle},
		{"FirstUseExactlyOnce", testFirstUseExactlyOnce},
		{"EditedRecordHolds", testEditedRecordHolds},
		{"DeletedEventFailsVerify", testDeletedEventFailsVerify},
		{"InsertedEventFailsVerify", testInsertedEventFailsVerify},
		{"PlantedRecordHolds", testPlantedRecordHolds},
		{"ChainCutBackToEarlierPrefix", testChainCutBackToEarlierPrefix},
		{"NewProfilesWhilePendingDoNotMoveTheReview", testNewProfilesWhilePendingDoNotMoveTheReview},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.f(t, s)
		})
	}
}

// ID returns the identity the suite gives the server named name.
func ID(name string) pin.Identity { return pin.IdentityForName(name) }

func tool(t *testing.T, name, description string) contract.Definition {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"name": name, "description": description, "inputSchema": map[string]any{"type": "object"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := contract.NewDefinition(contract.Tools, raw)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Contract returns a one-tool contract whose description is desc.
func Contract(t *testing.T, desc string) *contract.Contract {
	return contract.New(map[contract.Kind][]contract.Definition{contract.Tools: {tool(t, "search", desc)}}, nil)
}

var obs = pin.Observation{ClientVersion: "2025-06-18", Protocol: "2025-06-18"}

func observe(t *testing.T, s *pin.Store, id pin.Identity, c *contract.Contract, p pin.Posture, want pin.Outcome) pin.Result {
	t.Helper()
	res, err := s.Observe(id, obs, c, p, t0)
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	if res.Outcome != want {
		t.Fatalf("Observe: outcome %v, want %v", res.Outcome, want)
	}
	return res
}

func testFirstPinThenMatch(t *testing.T, s Suite) {
	st := s.New(t).Open(t)
	id := ID("alpha")
	res := observe(t, st, id, Contract(t, "v1"), pin.Guard, pin.FirstPin)
	if res.Pinned == nil {
		t.Fatal("a first pin without the pinned contract")
	}
	observe(t, st, id, Contract(t, "v1"), pin.Guard, pin.Match)
}

func testDriftIsPendingAndKept(t *testing.T, s Suite) {
	st := s.New(t).Open(t)
	id := ID("alpha")
	observe(t, st, id, Contract(t, "v1"), pin.Guard, pin.FirstPin)
	res := observe(t, st, id, Contract(t, "v2"), pin.Guard, pin.Drift)
	if len(res.Changes) == 0 {
		t.Fatal("drift without changes")
	}
	again := observe(t, st, id, Contract(t, "v2"), pin.Guard, pin.Drift)
	if again.Pending != res.Pending {
		t.Fatalf("the same drift again moved the pending change: %s, then %s", res.Pending, again.Pending)
	}
	// The pinned contract still matches on a single machine; a fleet
	// holds it while the change is pending.
	want := pin.Match
	if s.Fleet {
		want = pin.Drift
	}
	observe(t, st, id, Contract(t, "v1"), pin.Guard, want)
	// Under monitor drift is recorded just the same.
	observe(t, st, id, Contract(t, "v3"), pin.Monitor, pin.Drift)
}

func testReviewThenApprove(t *testing.T, s Suite) {
	st := s.New(t).Open(t)
	id := ID("alpha")
	observe(t, st, id, Contract(t, "v1"), pin.Guard, pin.FirstPin)
	res := observe(t, st, id, Contract(t, "v2"), pin.Guard, pin.Drift)
	if err := st.MarkReviewed(id.ID, res.Pending); err != nil {
		t.Fatalf("MarkReviewed: %v", err)
	}
	rec, err := st.Get(id.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.PendingReviewed {
		t.Fatal("the review mark was not kept")
	}
	if err := st.ApproveBy(id.ID, rec.PendingDigest, "alice@example", t0.Add(time.Hour)); err != nil {
		t.Fatalf("ApproveBy: %v", err)
	}
	observe(t, st, id, Contract(t, "v2"), pin.Guard, pin.Match)
	if err := st.Approve(id.ID, rec.PendingDigest, t0); !errors.Is(err, pin.ErrNoPending) {
		t.Fatalf("a second approval: %v, want ErrNoPending", err)
	}
	h, err := st.History(id.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := h[len(h)-1]
	if last.Op != "approve" || last.By != "alice@example" || !last.Time.Equal(t0.Add(time.Hour)) {
		t.Fatalf("the approve event is %+v, want who and when", last)
	}
	if err := st.ApproveBy(id.ID, rec.PendingDigest, "bob\nroot", t0); err == nil {
		t.Fatal("an approver with a newline was accepted")
	}
}

func testApproveRefusedWhenMoved(t *testing.T, s Suite) {
	st := s.New(t).Open(t)
	id := ID("alpha")
	observe(t, st, id, Contract(t, "v1"), pin.Guard, pin.FirstPin)
	res := observe(t, st, id, Contract(t, "v2"), pin.Guard, pin.Drift)
	if err := st.MarkReviewed(id.ID, res.Pending); err != nil {
		t.Fatal(err)
	}
	// The server moves again after the review.
	observe(t, st, id, Contract(t, "v3"), pin.Guard, pin.Drift)
	if err := st.Approve(id.ID, res.Pending, t0); !errors.Is(err, pin.ErrPendingMoved) {
		t.Fatalf("Approve after the change moved: %v, want ErrPendingMoved", err)
	}
	observe(t, st, id, Contract(t, "v3"), pin.Guard, pin.Drift)
}

func testStrictAwaitsFirstApproval(t *testing.T, s Suite) {
	st := s.New(t).Open(t)
	id := ID("alpha")
	res := observe(t, st, id, Contract(t, "v1"), pin.Strict, pin.Drift)
	if !res.AwaitingApproval {
		t.Fatal("a strict first use is not awaiting approval")
	}
	observe(t, st, id, Contract(t, "v1"), pin.Guard, pin.Drift)
	if err := st.Approve(id.ID, res.Pending, t0); err != nil {
		t.Fatal(err)
	}
	observe(t, st, id, Contract(t, "v1"), pin.Strict, pin.Match)
}

func testForget(t *testing.T, s Suite) {
	st := s.New(t).Open(t)
	id := ID("alpha")
	observe(t, st, id, Contract(t, "v1"), pin.Guard, pin.FirstPin)
	if err := st.Forget("alpha", t0); err != nil {
		t.Fatalf("Forget by label: %v", err)
	}
	if err := st.Forget(id.ID, t0); !errors.Is(err, pin.ErrNotFound) {
		t.Fatalf("Forget again: %v, want ErrNotFound", err)
	}
	observe(t, st, id, Contract(t, "v2"), pin.Guard, pin.FirstPin)
}

func testListGetVerify(t *testing.T, s Suite) {
	st := s.New(t).Open(t)
	if l, err := st.List(); err != nil || len(l) != 0 {
		t.Fatalf("List of an empty store: %v, %v", l, err)
	}
	a, b := ID("alpha"), ID("beta")
	observe(t, st, a, Contract(t, "v1"), pin.Guard, pin.FirstPin)
	observe(t, st, b, Contract(t, "v1"), pin.Guard, pin.FirstPin)
	observe(t, st, b, Contract(t, "v2"), pin.Guard, pin.Drift)
	l, err := st.List()
	if err != nil || len(l) != 2 {
		t.Fatalf("List: %v, %v", l, err)
	}
	byID := map[string]pin.Summary{l[0].ID: l[0], l[1].ID: l[1]}
	if byID[a.ID].DriftPending || !byID[b.ID].DriftPending || byID[a.ID].Label != "alpha" {
		t.Fatalf("List: %+v", l)
	}
	if byID[a.ID].LastSeen.IsZero() {
		t.Fatal("no last-seen time")
	}
	rec, err := st.Get("beta")
	if err != nil || len(rec.Pending) != 1 || len(rec.Profiles) != 1 {
		t.Fatalf("Get: %+v, %v", rec, err)
	}
	if _, err := st.Get("gamma"); !errors.Is(err, pin.ErrNotFound) {
		t.Fatalf("Get of an unknown label: %v", err)
	}
	rep, err := st.Verify()
	if err != nil || !rep.OK() || rep.Servers != 2 || rep.Events != 3 {
		t.Fatalf("Verify: %+v, %v", rep, err)
	}
}

func testApprovalSeenByEveryHandle(t *testing.T, s Suite) {
	b := s.New(t)
	a, other := b.Open(t), b.Open(t)
	id := ID("alpha")
	observe(t, a, id, Contract(t, "v1"), pin.Guard, pin.FirstPin)
	observe(t, other, id, Contract(t, "v1"), pin.Guard, pin.Match)
	res := observe(t, a, id, Contract(t, "v2"), pin.Guard, pin.Drift)
	observe(t, other, id, Contract(t, "v2"), pin.Guard, pin.Drift)
	if err := other.MarkReviewed(id.ID, res.Pending); err != nil {
		t.Fatal(err)
	}
	if err := a.Approve(id.ID, res.Pending, t0); err != nil {
		t.Fatal(err)
	}
	observe(t, other, id, Contract(t, "v2"), pin.Guard, pin.Match)
	observe(t, other, id, Contract(t, "v1"), pin.Guard, pin.Drift)
}

// testFirstUseExactlyOnce starts 21 first sessions of one new server at the
// same moment from 3 handles: exactly one pins, the others verify against
// it (or, having seen another contract, drift).
func testFirstUseExactlyOnce(t *testing.T, s Suite) {
	b := s.New(t)
	handles := []*pin.Store{b.Open(t), b.Open(t), b.Open(t)}
	id := ID("shared")
	const n = 21
	var (
		wg       sync.WaitGroup
		start    = make(chan struct{})
		outcomes = make([]pin.Outcome, n)
		errs     = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			<-start
			res, err := handles[i%3].Observe(id, obs, Contract(t, "v1"), pin.Guard, t0)
			outcomes[i], errs[i] = res.Outcome, err
		})
	}
	close(start)
	wg.Wait()
	first := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("session %d: %v", i, errs[i])
		}
		switch outcomes[i] {
		case pin.FirstPin:
			first++
		case pin.Match:
		default:
			t.Fatalf("session %d: %v", i, outcomes[i])
		}
	}
	if first != 1 {
		t.Fatalf("%d sessions pinned, want exactly 1", first)
	}
	rep, err := handles[0].Verify()
	if err != nil || !rep.OK() || rep.Events != 1 {
		t.Fatalf("Verify: %+v, %v", rep, err)
	}
}

func wantTampered(t *testing.T, st *pin.Store, id pin.Identity) {
	t.Helper()
	if _, err := st.Observe(id, obs, Contract(t, "v1"), pin.Monitor, t0); !errors.Is(err, pin.ErrTampered) {
		t.Fatalf("Observe of a tampered server under monitor: %v, want ErrTampered", err)
	}
	rep, err := st.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		t.Fatal("Verify found nothing")
	}
}

func testEditedRecordHolds(t *testing.T, s Suite) {
	b := s.New(t)
	st := b.Open(t)
	id := ID("alpha")
	observe(t, st, id, Contract(t, "v1"), pin.Guard, pin.FirstPin)
	b.EditRecord(t, id.ID)
	wantTampered(t, st, id)
	if err := st.Forget(id.ID, t0); err != nil {
		t.Fatalf("Forget of a tampered server: %v", err)
	}
	observe(t, st, id, Contract(t, "v1"), pin.Guard, pin.FirstPin)
}

func testDeletedEventFailsVerify(t *testing.T, s Suite) {
	b := s.New(t)
	st := b.Open(t)
	id := ID("alpha")
	observe(t, st, id, Contract(t, "v1"), pin.Guard, pin.FirstPin)
	observe(t, st, id, Contract(t, "v2"), pin.Guard, pin.Drift)
	observe(t, st, ID("beta"), Contract(t, "v1"), pin.Guard, pin.FirstPin)
	b.DeleteEvent(t, 2)
	wantTampered(t, st, id)
	if _, err := st.List(); !errors.Is(err, pin.ErrTampered) {
		t.Fatalf("List over a broken chain: %v", err)
	}
}

func testInsertedEventFailsVerify(t *testing.T, s Suite) {
	b := s.New(t)
	st := b.Open(t)
	id := ID("alpha")
	observe(t, st, id, Contract(t, "v1"), pin.Guard, pin.FirstPin)
	// A forget that does not chain to the event before it.
	forged := fmt.Sprintf(`{"seq":2,"time":"2026-11-02T09:00:00Z","op":"forget","id":"%s","record":null,"prev":"%064d"}`, id.ID, 0)
	b.AppendEvent(t, []byte(forged))
	wantTampered(t, st, id)
}

func testPlantedRecordHolds(t *testing.T, s Suite) {
	b := s.New(t)
	st := b.Open(t)
	observe(t, st, ID("alpha"), Contract(t, "v1"), pin.Guard, pin.FirstPin)
	id := ID("planted")
	b.PlantRecord(t, id.ID, []byte(`{"version":2}`))
	wantTampered(t, st, id)
}

// testChainCutBackToEarlierPrefix: the newest event (a drift waiting for
// review) and its record are rolled back to the chain's earlier, still
// valid, prefix. A handle that has verified the longer chain holds the
// server and Verify reports it; a handle that never saw the longer chain
// cannot tell (tamper evidence needs some memory of the past).
func testChainCutBackToEarlierPrefix(t *testing.T, s Suite) {
	b := s.New(t)
	st := b.Open(t)
	id := ID("alpha")
	observe(t, st, id, Contract(t, "v1"), pin.Guard, pin.FirstPin)
	before := b.ReadRecord(t, id.ID)
	observe(t, st, id, Contract(t, "v2"), pin.Guard, pin.Drift)
	b.DeleteEvent(t, 2)
	b.WriteRecord(t, id.ID, before)
	wantTampered(t, st, id)
	rep, err := st.Verify()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range rep.Faults {
		found = found || strings.Contains(f.Reason, "cut off")
	}
	if !found {
		t.Fatalf("Verify does not say the chain was cut back: %+v", rep.Faults)
	}
	// The rewritten history in place of the cut: a chain as long as the
	// one verified, but another one, is refused as well.
	fresh := b.Open(t)
	observe(t, fresh, id, Contract(t, "v1"), pin.Guard, pin.Match)
	if _, err := fresh.Observe(ID("beta"), obs, Contract(t, "v1"), pin.Guard, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Observe(id, obs, Contract(t, "v1"), pin.Guard, t0); !errors.Is(err, pin.ErrTampered) {
		t.Fatalf("a rewritten chain of the same length: %v, want ErrTampered", err)
	}
}

// testNewProfilesWhilePendingDoNotMoveTheReview: while a drift waits for
// review, clients with capability names of their own (a client's to
// choose) open sessions that show the pinned contract. On a fleet they are
// held, but they do not join the pending set, so the person's review and
// approval of that set succeed; under strict, such a profile is then held
// for a review of its own. A new profile that shows a change of its own
// does join the set.
func testNewProfilesWhilePendingDoNotMoveTheReview(t *testing.T, s Suite) {
	for _, posture := range []pin.Posture{pin.Guard, pin.Strict} {
		t.Run(string(posture), func(t *testing.T) {
			st := s.New(t).Open(t)
			id := ID("alpha")
			first, err := st.Observe(id, obs, Contract(t, "v1"), posture, t0)
			if err != nil {
				t.Fatal(err)
			}
			if posture == pin.Strict {
				if err := st.Approve(id.ID, first.Pending, t0); err != nil {
					t.Fatalf("approving the first pin: %v", err)
				}
			}
			res := observe(t, st, id, Contract(t, "v2"), posture, pin.Drift)
			if err := st.MarkReviewed(id.ID, res.Pending); err != nil {
				t.Fatal(err)
			}
			want := pin.Drift // a fleet holds every profile while a change is pending
			if !s.Fleet {
				want = pin.ProfileAdded
				if posture == pin.Strict {
					want = pin.Drift
				}
			}
			for i := range 5 {
				o := obs
				o.Capabilities = []string{fmt.Sprintf("x-vendor-%d", i)}
				got, err := st.Observe(id, o, Contract(t, "v1"), posture, t0)
				if err != nil {
					t.Fatal(err)
				}
				if got.Outcome != want {
					t.Fatalf("a new profile showing the pinned contract: %v, want %v", got.Outcome, want)
				}
			}
			if !s.Fleet && posture == pin.Strict {
				return // a single machine under strict: each profile is a change of its own (issue 11)
			}
			if err := st.Approve(id.ID, res.Pending, t0); err != nil {
				t.Fatalf("approve after review, with new profiles seen meanwhile: %v", err)
			}
			observe(t, st, id, Contract(t, "v2"), posture, pin.Match)
			if !s.Fleet {
				return // the new profiles were pinned as they came (guard)
			}
			o := obs
			o.Capabilities = []string{"x-vendor-0"}
			after := pin.ProfileAdded
			if posture == pin.Strict {
				after = pin.Drift // strict: held for a review of its own now
			}
			if got, err := st.Observe(id, o, Contract(t, "v2"), posture, t0); err != nil || got.Outcome != after {
				t.Fatalf("the new profile after the approval: %v %v, want %v", got.Outcome, err, after)
			}
		})
	}
}
