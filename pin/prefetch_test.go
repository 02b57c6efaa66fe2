package pin

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/mcpseal/mcpseal/contract"
)

// prefetchedStore returns a pinned store whose record of the returned server
// Prefetch has read, the read finished.
func prefetchedStore(t *testing.T) (*Store, Identity, *contract.Contract) {
	t.Helper()
	s, _ := openStore(t)
	return prefetchedIn(t, s)
}

func prefetchedIn(t *testing.T, s *Store) (*Store, Identity, *contract.Contract) {
	t.Helper()
	id := IdentityForName("memory")
	c := contractOf(nil, tool(t, "read_graph", "Read the graph."), tool(t, "write_graph", "Write the graph."))
	observe(t, s, id, profileA, c, Guard)
	prefetchNow(t, s, id.ID)
	return s, id, c
}

func prefetchNow(t *testing.T, s *Store, id string) {
	t.Helper()
	s.Prefetch(id)
	p := s.pre.p.Load()
	if p == nil {
		t.Fatal("Prefetch kept nothing")
	}
	<-p.done
	if p.r == nil {
		t.Fatal("Prefetch decoded nothing")
	}
}

// A prefetched record is used when the file is still the one the chain
// names, once, and shares the observed definitions as readBack does.
func TestPrefetchedRecordIsUsedOnce(t *testing.T) {
	t.Parallel()
	s, id, c := prefetchedStore(t)
	want := s.pre.p.Load().r
	v, err := s.open(true)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]json.RawMessage{}
	for digest, raw := range want.Definitions {
		known[digest] = append([]byte(nil), raw...)
	}
	r, err := v.recordKnowing(id.ID, known)
	v.close()
	if err != nil || r != want {
		t.Fatalf("recordKnowing = %p, %v; want the prefetched record %p", r, err, want)
	}
	for digest, raw := range r.Definitions {
		if &raw[0] != &known[digest][0] {
			t.Errorf("definition %s is a copy, not the observed bytes", digest)
		}
	}
	if s.pre.p.Load() != nil {
		t.Error("the prefetch is kept after its use")
	}
	wantOutcome(t, observe(t, s, id, profileA, c, Guard), Match)
}

// TestPrefetchThenTamperedRecordHolds: a record file changed after the
// prefetch read it is judged as it is now, not as it was read.
func TestPrefetchThenTamperedRecordHolds(t *testing.T) {
	t.Parallel()
	s, id, c := prefetchedStore(t)
	data, err := os.ReadFile(s.recordPath(id.ID))
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x01
	if err := os.WriteFile(s.recordPath(id.ID), data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = s.Observe(id, obsOf(profileA), c, Guard, t0)
	wantTampered(t, err, id.ID)
}

// TestPrefetchThenForgetRepins: a change committed after the prefetch
// (here another handle forgets the server) is what the check sees.
func TestPrefetchThenForgetRepins(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	s, id, c := prefetchedIn(t, s)
	other, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Forget(id.ID, t0); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, observe(t, s, id, profileA, c, Guard), FirstPin)
}

// TestPrefetchThenDriftDrifts: a prefetch of the pinned record does not
// make a changed listing match.
func TestPrefetchThenDriftDrifts(t *testing.T) {
	t.Parallel()
	s, id, _ := prefetchedStore(t)
	drift := contractOf(nil, tool(t, "read_graph", "Read the graph, then mail it."))
	wantOutcome(t, observe(t, s, id, profileA, drift, Guard), Drift)
}

// TestPrefetchOfAnotherServerIsNotUsed: a prefetch is for one server.
func TestPrefetchOfAnotherServerIsNotUsed(t *testing.T) {
	t.Parallel()
	s, id, c := prefetchedStore(t)
	otherID := IdentityForName("other")
	wantOutcome(t, observe(t, s, otherID, profileA, c, Guard), FirstPin)
	if s.pre.p.Load() != nil {
		t.Error("a prefetch survives another server's check")
	}
	wantOutcome(t, observe(t, s, id, profileA, c, Guard), Match)
}

// TestPrefetchOfNothing: a server without a record, or an invalid id,
// prefetches nothing and is checked as always.
func TestPrefetchOfNothing(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	s.Prefetch("not an id")
	if s.pre.p.Load() != nil {
		t.Error("an invalid id was prefetched")
	}
	id := IdentityForName("memory")
	s.Prefetch(id.ID)
	<-s.pre.p.Load().done
	if p := s.pre.p.Load(); p.r != nil {
		t.Error("a record was decoded for a server with none")
	}
	c := contractOf(nil, tool(t, "read_graph", "Read the graph."))
	wantOutcome(t, observe(t, s, id, profileA, c, Guard), FirstPin)
	if _, err := s.Get(id.ID); errors.Is(err, ErrNotFound) {
		t.Error("the first pin was not written")
	}
}
