package pin

// Red-team pass (round 2) on the fixes for issue 11, points 1, 2 and 6:
// scenarios the fixes were not written against. Every test here failed on
// the branch it was written on because of a defect in the store, not in
// the test; each says what it expects and why.

import (
	"errors"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/contract"
)

// rootsSetup pins, under guard, a first profile without capabilities
// (echo) and then a roots profile that legitimately reveals a roots-only
// tool (the server-everything case). It returns the server, the two
// definitions, and the roots-only one.
func rootsSetup(t *testing.T, s *Store, name string, firstAt, rootsAt time.Time) (Identity, contract.Definition, contract.Definition) {
	t.Helper()
	id := IdentityForName(name)
	echo := tool(t, "echo", "Echo the input.")
	rootsOnly := tool(t, "get-roots-list", "List the client's roots.")
	res, err := s.Observe(id, session("2025-06-18", "2025-06-18"), contractOf(nil, echo), Guard, firstAt)
	if err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, res, FirstPin)
	res, err = s.Observe(id, session("2025-06-18", "2025-06-18", "roots"), contractOf(nil, echo, rootsOnly), Guard, rootsAt)
	if err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, res, ProfileAdded)
	return id, echo, rootsOnly
}

// noRootsClient is a new client version that declares no capability at all.
var noRootsClient = session("2025-11-25", "2025-11-25")

// The new-profile rule lets a profile list what "the first profile (the
// earliest pinned)" pinned. "Earliest" is read from profileEntry.Pinned,
// which Approve overwrites with the approval time. After a person approves
// an ordinary change under the server's real first profile, the roots
// profile becomes "the first", and its roots-only tool counts as something
// every later client may be shown: a client that declared no capability
// gets get-roots-list without review. That is exactly the laundering the
// rule exists to stop (TestDeclaredCapabilityCannotLaunderDefinitions).
func TestApprovalReorderLaundersCapabilityOnlyDefinition(t *testing.T) {
	t.Parallel()

	// Control: before any approval the rule holds.
	{
		s, _ := openStore(t)
		id, echo, rootsOnly := rootsSetup(t, s, "everything", t0, t0.Add(time.Minute))
		res, err := s.Observe(id, noRootsClient, contractOf(nil, echo, rootsOnly), Guard, t0.Add(2*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		wantOutcome(t, res, Drift)
	}

	s, _ := openStore(t)
	id, echo, rootsOnly := rootsSetup(t, s, "everything", t0, t0.Add(time.Minute))
	// An ordinary, reviewed change under the first profile: a new tool for
	// everyone without roots.
	extra := tool(t, "add", "Add two numbers.")
	res, err := s.Observe(id, session("2025-06-18", "2025-06-18"), contractOf(nil, echo, extra), Guard, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, res, Drift)
	rec, _ := s.Get(id.ID)
	if err := s.MarkReviewed(id.ID, rec.PendingDigest); err != nil {
		t.Fatal(err)
	}
	if err := s.Approve(id.ID, rec.PendingDigest, t0.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	// A client with no roots, and no capability of its own, is now shown
	// the roots-only tool, and nothing blocks.
	res, err = s.Observe(id, noRootsClient, contractOf(nil, echo, rootsOnly), Guard, t0.Add(4*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Drift {
		t.Fatalf("after approving a change of the first profile, a client without roots was shown get-roots-list: outcome %v, want drift", res.Outcome)
	}
}

// Observe takes now from the caller. A roots profile pinned while the
// clock read earlier than when the first profile was pinned (NTP step,
// a VM resumed from a snapshot, two machines sharing $MCPSEAL_HOME) is
// "the first profile" from then on, and what it was shown for roots
// spreads to every later client.
func TestClockStepBackLaundersCapabilityOnlyDefinition(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	id, echo, rootsOnly := rootsSetup(t, s, "everything", t0, t0.Add(-time.Hour))
	res, err := s.Observe(id, noRootsClient, contractOf(nil, echo, rootsOnly), Guard, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Drift {
		t.Fatalf("with the roots profile's pin time before the first profile's, a client without roots was shown get-roots-list: outcome %v, want drift", res.Outcome)
	}
}

// A strict first approval pins every pending profile at one time; "first
// profile" ties are broken by key, and keys sort by the client's version
// first. An older client that declared roots ("2024-11-05|roots") sorts
// before a newer one that declared nothing ("2025-06-18|") and becomes
// "the first profile": a later guard session of any client without roots
// is shown the roots-only tool without review.
func TestStrictFirstApprovalTieLaundersCapabilityOnlyDefinition(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	id := IdentityForName("everything")
	echo := tool(t, "echo", "Echo the input.")
	rootsOnly := tool(t, "get-roots-list", "List the client's roots.")
	observeAs(t, s, id, session("2025-06-18", "2025-06-18"), contractOf(nil, echo), Strict)
	observeAs(t, s, id, session("2024-11-05", "2024-11-05", "roots"), contractOf(nil, echo, rootsOnly), Strict)
	rec, _ := s.Get(id.ID)
	if err := s.Approve(id.ID, rec.PendingDigest, t0); err != nil {
		t.Fatal(err)
	}
	res := observeAs(t, s, id, noRootsClient, contractOf(nil, echo, rootsOnly), Guard)
	if res.Outcome != Drift {
		t.Fatalf("a client without roots was shown the roots-only tool approved for roots clients: outcome %v, want drift", res.Outcome)
	}
}

// Under strict a new profile is accepted when its whole contract equals
// one pinned profile's. That is weaker than guard: a client that declared
// no capability is silently shown everything a roots client was approved
// to see, which guard blocks. The stricter posture must never pass what
// guard holds.
func TestStrictNewProfileWeakerThanGuard(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	id, echo, rootsOnly := rootsSetup(t, s, "everything", t0, t0.Add(time.Minute))
	res, err := s.Observe(id, noRootsClient, contractOf(nil, echo, rootsOnly), Strict, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Drift {
		t.Fatalf("strict: a client without roots was shown the roots profile's whole contract: outcome %v, want drift (guard says drift)", res.Outcome)
	}
}

// Earlier releases named a pending change by its contract digest, and the
// store still accepts it as naming the set when one profile is pending.
// But the contract digest does not cover the session's protocol or the
// fallback flag, which Approve pins too. A person who reviewed a
// definition change (and kept its digest, as `review --json` prints it) and
// approves with `--digest` after the server moved the same profile to an
// older protocol, or refused server/discover, pins a protocol downgrade
// (and a permanent fallback allowance) that no review showed.
func TestContractDigestApprovesUnseenProtocolDowngrade(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		later Observation
	}{
		{"older protocol", session("2025-06-18", "2024-11-05", "roots")},
		{"discover refused", func() Observation {
			o := session("2025-06-18", "2025-06-18", "roots")
			o.DiscoverRefused = true
			return o
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := openStore(t)
			id := IdentityForName("memory")
			honest := contractOf(nil, tool(t, "read_graph", "Read the graph."))
			pulled := contractOf(nil, tool(t, "read_graph", "Read the graph quickly."))
			if tc.later.DiscoverRefused {
				// The server spoke 2026-07-28 to some client before.
				observeAs(t, s, id, session("2026-07-28", "2026-07-28", "roots"), honest, Guard)
			}
			observeAs(t, s, id, session("2025-06-18", "2025-06-18", "roots"), honest, Guard)
			res := observeAs(t, s, id, session("2025-06-18", "2025-06-18", "roots"), pulled, Guard)
			wantOutcome(t, res, Drift)
			reviewed := res.Pending // what the person reviewed: a description change
			if err := s.MarkReviewed(id.ID, reviewed); err != nil {
				t.Fatal(err)
			}
			// The server now shows the same contract on a downgraded session.
			res = observeAs(t, s, id, tc.later, pulled, Guard)
			wantOutcome(t, res, Drift)
			if res.Pending != reviewed {
				t.Fatalf("setup: the contract digest changed")
			}
			err := s.Approve(id.ID, reviewed, t0)
			if !errors.Is(err, ErrPendingMoved) {
				rec, _ := s.Get(id.ID)
				t.Fatalf("Approve by the reviewed contract digest after a protocol change = %v, want ErrPendingMoved; pinned %+v", err, rec.Profiles)
			}
		})
	}
}

// A new profile's pending change is recorded while the profile has no pin,
// so it carries no protocol change. If the profile is pinned meanwhile by
// ProfileAdded (the server showed an acceptable listing on another
// protocol), the pending entry stays as it was, with the same review-set
// digest and the same review mark: approving it then silently re-pins the
// profile to the pending session's older protocol. Neither review nor the
// gate's block message shows the protocol-downgraded change.
func TestProfileAddedUnderPendingProfileHidesProtocolDowngrade(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	id := IdentityForName("memory")
	echo := tool(t, "echo", "Echo the input.")
	benign := tool(t, "echo_upper", "Echo the input in upper case.")
	observeAs(t, s, id, session("2025-06-18", "2025-06-18", "roots"), contractOf(nil, echo), Guard)

	// A new client version (same capabilities). The server answers an old
	// protocol and adds a harmless-looking tool: drift, a pending change
	// for the new profile.
	newClientOld := session("2025-11-25", "2024-11-05", "roots")
	wantOutcome(t, observeAs(t, s, id, newClientOld, contractOf(nil, echo, benign), Guard), Drift)
	rec, _ := s.Get(id.ID)
	if err := s.MarkReviewed(id.ID, rec.PendingDigest); err != nil {
		t.Fatal(err)
	}
	reviewed := rec.PendingDigest
	reviewedChanges := onlyPendingChanges(t, s, id)

	// Next session of the same client: the server answers the client's
	// version with an acceptable listing; the profile is pinned on 2025-11-25.
	newClient := session("2025-11-25", "2025-11-25", "roots")
	wantOutcome(t, observeAs(t, s, id, newClient, contractOf(nil, echo), Guard), ProfileAdded)

	// The gate's block message for the old-protocol session must name the
	// protocol downgrade against the profile's pin now.
	res := observeAs(t, s, id, newClientOld, contractOf(nil, echo, benign), Guard)
	wantOutcome(t, res, Drift)
	hasProto := false
	for _, ch := range res.Changes {
		if ch.Kind == contract.ProtocolKind {
			hasProto = true
		}
	}
	if !hasProto {
		t.Errorf("drift of a pinned 2025-11-25 profile to 2024-11-05 reported without a protocol change: %+v", res.Changes)
	}

	// Approving what was reviewed must not re-pin the profile to the
	// older protocol unless review showed it as a change.
	shown := reviewedChanges
	err := s.Approve(id.ID, reviewed, t0)
	if errors.Is(err, ErrPendingMoved) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	rec, _ = s.Get(id.ID)
	for _, p := range rec.Profiles {
		if p.Key == newClient.Profile() && p.Protocol != nil && *p.Protocol == "2024-11-05" && !hasProtocolChange(shown) {
			t.Fatalf("approve re-pinned profile %s from 2025-11-25 to 2024-11-05; the reviewed changes were %+v", p.Key, shown)
		}
	}
}

func onlyPendingChanges(t *testing.T, s *Store, id Identity) []contract.Change {
	rec, err := s.Get(id.ID)
	if err != nil || len(rec.Pending) == 0 {
		return nil
	}
	return rec.Pending[0].Changes
}

// A version 1 pending change has no protocol. A matching session of its
// profile records the profile's protocol (a profile event); approving the
// version 1 change afterwards replaces the profile's entry with the
// pending one's facts, and the recorded protocol is dropped (only the
// capabilities are carried over). The next session then records whatever
// protocol the server answers as a fresh baseline: a downgrade passes.
func TestApprovingV1PendingErasesRecordedProtocol(t *testing.T) {
	t.Parallel()
	s := plantV1(t)
	id := Identity{ID: v1ID, Label: "everything"}
	instr := ptrTo("A test server.")
	echo := tool(t, "echo", "Echo the input.")
	wantOutcome(t, observeAs(t, s, id, session("2025-06-18", "2025-06-18"), contractOf(instr, echo), Guard), Match)
	rec, _ := s.Get(v1ID)
	if p := rec.Profiles[0]; p.Key != "2025-06-18|" || p.Protocol == nil || *p.Protocol != "2025-06-18" {
		t.Fatalf("setup: protocol not recorded: %+v", p)
	}
	pending := rec.Pending[0].Contract
	if err := s.Approve(v1ID, rec.PendingDigest, t0); err != nil {
		t.Fatal(err)
	}
	rec, _ = s.Get(v1ID)
	if p := rec.Profiles[0]; p.Protocol == nil || *p.Protocol != "2025-06-18" {
		t.Errorf("approving a version 1 change dropped the profile's recorded protocol: %v", p.Protocol)
	}
	res := observeAs(t, s, id, session("2025-06-18", "2024-11-05"), pending, Guard)
	if res.Outcome != Drift {
		t.Fatalf("a session downgraded to 2024-11-05 after the approval = %v, want drift (protocol-downgraded)", res.Outcome)
	}
}

// A server answers a new client version (same capabilities) with an older
// protocol than it ever agreed to before: it spoke 2025-06-18 to a client
// that asked for 2025-06-18, and now answers 2024-11-05 to one that asks
// for 2025-11-25. The new profile is pinned on 2024-11-05 as a fresh
// baseline (ProfileAdded), because a protocol change is only looked for on
// a pinned profile or after a refused server/discover. Issue 11 asks that
// version fallback between sessions of one server be drift-checked like
// anything else; a server-chosen downgrade is not a new baseline.
func TestNewProfileServerChosenOlderProtocolIsFreeBaseline(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	id := IdentityForName("memory")
	c := contractOf(nil, tool(t, "read_graph", "Read the graph."))
	observeAs(t, s, id, session("2025-06-18", "2025-06-18", "roots"), c, Guard)
	res := observeAs(t, s, id, session("2025-11-25", "2024-11-05", "roots"), c, Guard)
	if res.Outcome != Drift {
		t.Fatalf("a new client asking 2025-11-25, answered 2024-11-05 by a server that spoke 2025-06-18: outcome %v, want drift (protocol-downgraded)", res.Outcome)
	}
}
