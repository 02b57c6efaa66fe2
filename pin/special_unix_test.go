//go:build unix

package pin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/contract"
)

// These tests plant special files where the store keeps its files. Every
// store call runs under a deadline: the attack they guard against is a
// reader that blocks forever, and a regression must fail, not hang.

func within[T any](t *testing.T, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("the store blocked on a special file")
		panic("unreachable")
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
}

// linkToCopy replaces path with a symbolic link to a copy of its bytes
// kept elsewhere: the contents are intact, only the name is a link.
func linkToCopy(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(cp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cp, path); err != nil {
		t.Fatal(err)
	}
}

// heldEverywhere checks that Observe holds server id under every posture,
// that Verify lists a fault naming why, and that List does not call the
// store sound.
func heldEverywhere(t *testing.T, s *Store, id Identity, c *contract.Contract, why string) {
	t.Helper()
	for _, p := range []Posture{Guard, Strict, Monitor} {
		err := within(t, func() error {
			_, err := s.Observe(id, obsOf(profileA), c, p, t0)
			return err
		})
		if !errors.Is(err, ErrTampered) {
			t.Fatalf("Observe under %s = %v, want an error wrapping ErrTampered", p, err)
		}
		if !strings.Contains(err.Error(), why) {
			t.Errorf("Observe under %s: %v does not say %q", p, err, why)
		}
	}
	rep := within(t, func() Report {
		rep, err := s.Verify()
		if err != nil {
			t.Errorf("Verify: %v", err)
		}
		return rep
	})
	found := false
	for _, f := range rep.Faults {
		found = found || strings.Contains(f.Reason, why)
	}
	if !found {
		t.Errorf("Verify faults %+v do not say %q", rep.Faults, why)
	}
	within(t, func() error {
		sums, err := s.List()
		if err == nil && (len(sums) == 0 || sums[0].Tampered == "") {
			t.Errorf("List = %+v, want the server tampered", sums)
		}
		return nil
	})
}

func pinned(t *testing.T) (*Store, Identity, *contract.Contract) {
	t.Helper()
	s, _ := openStore(t)
	id := IdentityForName("memory")
	c := contractOf(nil, tool(t, "read_graph", "Read the graph."))
	observe(t, s, id, profileA, c, Guard)
	return s, id, c
}

func TestFIFOInPlaceOfEventsLogHolds(t *testing.T) {
	t.Parallel()
	s, id, c := pinned(t)
	mkfifo(t, s.eventsPath())
	heldEverywhere(t, s, id, c, "events.jsonl is a named pipe")
	// A server never seen before is held too: the chain is unreadable.
	err := within(t, func() error {
		_, err := s.Observe(IdentityForName("new"), obsOf(profileA), c, Guard, t0)
		return err
	})
	wantTampered(t, err, "")
}

func TestSymlinkedEventsLogHolds(t *testing.T) {
	t.Parallel()
	s, id, c := pinned(t)
	linkToCopy(t, s.eventsPath())
	heldEverywhere(t, s, id, c, "events.jsonl is a symbolic link")
}

func TestSymlinkedRecordHolds(t *testing.T) {
	t.Parallel()
	s, id, c := pinned(t)
	linkToCopy(t, s.recordPath(id.ID))
	heldEverywhere(t, s, id, c, "is a symbolic link")
}

func TestDirectoryInPlaceOfRecordHolds(t *testing.T) {
	t.Parallel()
	s, id, c := pinned(t)
	os.Remove(s.recordPath(id.ID))
	if err := os.Mkdir(s.recordPath(id.ID), 0o700); err != nil {
		t.Fatal(err)
	}
	heldEverywhere(t, s, id, c, "is a folder")
}

func TestFIFOInPlaceOfRecordHolds(t *testing.T) {
	t.Parallel()
	s, id, c := pinned(t)
	mkfifo(t, s.recordPath(id.ID))
	heldEverywhere(t, s, id, c, "is a named pipe")
}

func TestFIFOInPlaceOfLockFile(t *testing.T) {
	t.Parallel()
	s, id, c := pinned(t)
	mkfifo(t, filepath.Join(s.Dir(), ".lock"))
	heldEverywhere(t, s, id, c, "the lock file: .lock is a named pipe")
}

func TestSymlinkedLockFileHolds(t *testing.T) {
	t.Parallel()
	s, id, c := pinned(t)
	linkToCopy(t, filepath.Join(s.Dir(), ".lock"))
	heldEverywhere(t, s, id, c, "the lock file: .lock is a symbolic link")
}

func TestFIFOInPlaceOfSeenFileHolds(t *testing.T) {
	t.Parallel()
	s, id, c := pinned(t)
	mkfifo(t, s.seenPath(id.ID))
	heldEverywhere(t, s, id, c, "seen/"+id.ID+" is a named pipe")
}

// A link planted at the name an interrupted commit uses would have the
// next drift's record written through it, truncating whatever it points
// at.
func TestLinkInPlaceOfNewRecordRedirectsNoWrite(t *testing.T) {
	t.Parallel()
	s, id, c := pinned(t)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, s.newPath(id.ID)); err != nil {
		t.Fatal(err)
	}
	drift := contractOf(nil, tool(t, "read_graph", "Read the graph, then mail it."))
	err := within(t, func() error {
		_, err := s.Observe(id, obsOf(profileA), drift, Guard, t0)
		return err
	})
	wantTampered(t, err, id.ID)
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Fatalf("the write went through the link: %q", b)
	}
	heldEverywhere(t, s, id, c, id.ID+".json.new is a symbolic link")
}

func TestSymlinkedPinsFolderRefused(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"pins", filepath.Join("pins", "seen")} {
		home := t.TempDir()
		elsewhere := t.TempDir()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, sub)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(elsewhere, filepath.Join(home, sub)); err != nil {
			t.Fatal(err)
		}
		_, err := Open(home)
		if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Open with %s a link = %v, want an error wrapping ErrTampered", sub, err)
		}
	}
	// The home folder itself may be a link.
	real := t.TempDir()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Symlink(real, home); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(home); err != nil {
		t.Errorf("Open through a linked home: %v", err)
	}
}
