package pin

import (
	"os"
	"testing"
	"time"
)

// The last-seen file is written without fsync (touch), so after a crash it
// may be empty, cut short or hold whatever the disk had: every reader
// takes that as "never seen", and none of it makes the store suspect.
func TestTornLastSeenReadsAsUnknown(t *testing.T) {
	t.Parallel()
	for name, data := range map[string]string{
		"empty":      "",
		"cut short":  "2026-11-02T09:0",
		"zeroes":     "\x00\x00\x00\x00\x00\x00\x00\x00",
		"garbage":    "not a time\n",
		"oversized":  string(make([]byte, maxSeenSize+1)),
		"no newline": "2026-11-02T09:00:00Z trailing",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, _ := openStore(t)
			id := IdentityForName("memory")
			c := contractOf(nil, tool(t, "read_graph", "Read the graph."))
			observe(t, s, id, profileA, c, Guard)
			if err := os.WriteFile(s.seenPath(id.ID), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			rec, err := s.Get(id.ID)
			if err != nil || !rec.LastSeen.IsZero() {
				t.Fatalf("Get: last seen %v, %v; want zero", rec.LastSeen, err)
			}
			sums, err := s.List()
			if err != nil || len(sums) != 1 || !sums[0].LastSeen.IsZero() {
				t.Fatalf("List = %+v, %v; want one server, never seen", sums, err)
			}
			if rep := mustVerify(t, s); len(rep.Notes) > 0 {
				t.Errorf("verify notes %v", rep.Notes)
			}
			snap, err := s.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := snap.Seen[id.ID]; ok {
				t.Errorf("the snapshot copies a last-seen time from %q", data)
			}
			// The next session matches as before and writes a time again.
			later := t0.Add(time.Hour)
			res, err := s.Observe(id, obsOf(profileA), c, Guard, later)
			if err != nil {
				t.Fatal(err)
			}
			wantOutcome(t, res, Match)
			if rec, err := s.Get(id.ID); err != nil || !rec.LastSeen.Equal(later) {
				t.Errorf("after the next session: last seen %v, %v; want %v", rec.LastSeen, err, later)
			}
		})
	}
}
