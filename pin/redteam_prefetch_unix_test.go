//go:build unix

package pin

import (
	"os"
	"syscall"
	"testing"
)

// TestRedTeamPrefetchThenSpecialFile: whatever is planted after the
// prefetch read the record (a FIFO, a folder or a link at the record,
// the .new file or the last-seen file), the check finds it as the
// ordinary path does: the prefetch is not used and the server is held.
func TestRedTeamPrefetchThenSpecialFile(t *testing.T) {
	t.Parallel()
	plant := map[string]func(path string) error{
		"FIFO":   func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"folder": func(p string) error { return os.Mkdir(p, 0o700) },
		"link":   func(p string) error { return os.Symlink("/dev/null", p) },
	}
	for _, at := range []string{"record", "new", "seen"} {
		for kind, mk := range plant {
			t.Run(at+"/"+kind, func(t *testing.T) {
				t.Parallel()
				s, id, c := prefetchedStore(t)
				path := map[string]string{"record": s.recordPath(id.ID), "new": s.newPath(id.ID), "seen": s.seenPath(id.ID)}[at]
				if at != "new" {
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
				}
				if err := mk(path); err != nil {
					t.Fatal(err)
				}
				_, err := s.Observe(id, obsOf(profileA), c, Guard, t0)
				wantTampered(t, err, id.ID)
			})
		}
	}
}

// TestRedTeamPrefetchOfSpecialFile: a FIFO, folder or link at the record
// when the prefetch runs decodes nothing, does not block, and the check
// holds the server.
func TestRedTeamPrefetchOfSpecialFile(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"FIFO", "folder", "link"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s, _ := openStore(t)
			id := IdentityForName("memory")
			c := contractOf(nil, tool(t, "read_graph", "Read the graph."))
			observe(t, s, id, profileA, c, Guard)
			path := s.recordPath(id.ID)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			var err error
			switch kind {
			case "FIFO":
				err = syscall.Mkfifo(path, 0o600)
			case "folder":
				err = os.Mkdir(path, 0o700)
			case "link":
				err = os.Symlink("/dev/zero", path)
			}
			if err != nil {
				t.Fatal(err)
			}
			s.Prefetch(id.ID)
			p := s.pre.p.Load()
			<-p.done
			if p.r != nil {
				t.Fatal("a record was decoded from a special file")
			}
			_, err = s.Observe(id, obsOf(profileA), c, Guard, t0)
			wantTampered(t, err, id.ID)
		})
	}
}
