package pin

import (
	"os"
	"testing"
	"time"
)

// TestRedTeamPrefetchReadsWhileAWriterHoldsTheLock: Prefetch read the
// record file with no lock at all, while another process held the
// exclusive lock to commit. Every other open of a record holds the
// store's lock, and Windows (a release target) relies on that: a file
// another process holds open cannot be renamed over or removed there (Go
// opens without FILE_SHARE_DELETE), so a session starting while another
// one drifts, or while a person approves or forgets the server, made that
// writer's rename fail after its event was appended: an error for an
// approve that did take effect. The read must wait for the writer.
func TestRedTeamPrefetchReadsWhileAWriterHoldsTheLock(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	id := IdentityForName("memory")
	c := contractOf(nil, tool(t, "read_graph", "Read the graph."))
	observe(t, s, id, profileA, c, Guard)

	writer, err := Open(home) // another process
	if err != nil {
		t.Fatal(err)
	}
	v, err := writer.open(true)
	if err != nil {
		t.Fatal(err)
	}
	s.Prefetch(id.ID)
	p := s.pre.p.Load()
	select {
	case <-p.done:
		v.close()
		t.Fatal("Prefetch read the record while another process held the exclusive lock")
	case <-time.After(200 * time.Millisecond):
	}
	v.close()
	<-p.done
	if p.r == nil {
		t.Fatal("Prefetch decoded nothing once the writer was done")
	}
	wantOutcome(t, observe(t, s, id, profileA, c, Guard), Match)
}

// TestRedTeamPrefetchThenApproveElsewhere: another process approves a
// change between the prefetch and the check; the prefetched (older) pin
// is not what the session is judged against.
func TestRedTeamPrefetchThenApproveElsewhere(t *testing.T) {
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
	c2 := contractOf(nil, tool(t, "read_graph", "Read the graph, then mail it."))
	wantOutcome(t, observe(t, other, id, profileA, c2, Guard), Drift)
	rec, err := other.Get(id.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.MarkReviewed(id.ID, rec.PendingDigest); err != nil {
		t.Fatal(err)
	}
	if err := other.Approve(id.ID, rec.PendingDigest, t0); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, observe(t, s, id, profileA, c, Guard), Drift)
}

// TestRedTeamPrefetchOfAnInterruptedCommit: a commit cut off between its
// event and its rename leaves the older record in place and the one the
// chain names in the .new file. The prefetch read the older one; the
// check rolls the commit forward as always and judges the newer.
func TestRedTeamPrefetchOfAnInterruptedCommit(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	id := IdentityForName("memory")
	c := contractOf(nil, tool(t, "read_graph", "Read the graph."))
	observe(t, s, id, profileA, c, Guard)
	older, err := os.ReadFile(s.recordPath(id.ID))
	if err != nil {
		t.Fatal(err)
	}
	c2 := contractOf(nil, tool(t, "read_graph", "Read the graph, then mail it."))
	wantOutcome(t, observe(t, s, id, profileA, c2, Guard), Drift)
	newer, err := os.ReadFile(s.recordPath(id.ID))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.newPath(id.ID), newer, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.recordPath(id.ID), older, 0o600); err != nil {
		t.Fatal(err)
	}
	prefetchNow(t, s, id.ID)
	// The newer record holds the drift as pending: the same drift again
	// is Drift, writing nothing; the older one would have no pending.
	wantOutcome(t, observe(t, s, id, profileA, c2, Guard), Drift)
	got, err := os.ReadFile(s.recordPath(id.ID))
	if err != nil || string(got) != string(newer) {
		t.Fatalf("the interrupted commit was not rolled forward (%v)", err)
	}
	rec, err := s.Get(id.ID)
	if err != nil || len(rec.Pending) != 1 {
		t.Fatalf("Get = %+v, %v; want the pending drift", rec, err)
	}
}
