//go:build unix

package pin

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRedTeamHardLinkAtNewWritesThroughIntoAnotherFile: another local
// process plants <id>.json.new as a hard link to another of the store's
// files (another server's record, or events.jsonl). writeRecordFile's
// doc says "a FIFO or link there is refused"; a hard link is a regular
// file to Lstat, so the next commit of id opens it O_TRUNC and writes id's
// record through it into the other file, and the rename then makes id's
// record file the same inode. Whatever is detected afterwards, mcpseal has
// itself destroyed another server's pin (or the event chain) on the
// strength of a name it did not create.
func TestRedTeamHardLinkAtNewWritesThroughIntoAnotherFile(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"record", "events"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			s, _ := openStore(t)
			id, other := IdentityForName("linked"), IdentityForName("victim")
			observe(t, s, id, profileA, contractOf(nil, tool(t, "a", "A.")), Guard)
			observe(t, s, other, profileA, contractOf(nil, tool(t, "v", "V.")), Guard)
			res := observe(t, s, id, profileA, contractOf(nil, tool(t, "a", "A, changed.")), Guard)
			victim := filepath.Join(s.Dir(), other.ID+".json")
			if target == "events" {
				victim = s.eventsPath()
			}
			before, err := os.ReadFile(victim)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Link(victim, s.newPath(id.ID)); err != nil {
				t.Fatal(err)
			}
			approveErr := s.Approve(id.ID, res.Pending, time.Now())
			after, err := os.ReadFile(victim)
			if err != nil {
				t.Fatal(err)
			}
			// The event log takes the approval's event, appended; nothing
			// else of it, or of the other record, changes.
			if target == "events" && !bytes.HasPrefix(after, before) || target == "record" && !bytes.Equal(before, after) {
				t.Errorf("a commit of %s (err %v) wrote through a hard link at its .new file into %s", id.ID, approveErr, filepath.Base(victim))
			}
			if approveErr != nil {
				t.Errorf("approve: %v", approveErr)
			}
			if _, err := s.Get(other.ID); err != nil {
				t.Errorf("after the commit the other server reads as %v", err)
			}
			if _, err := s.Get(id.ID); err != nil {
				t.Errorf("after the commit the approved server reads as %v", err)
			}
		})
	}
}
