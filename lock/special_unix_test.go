//go:build unix

package lock

import (
	"errors"
	"github.com/mcpseal/mcpseal/internal/atomicfile/specialtest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// These tests plant special files where the lock package reads and writes.
// Every call runs under a deadline, so a regression that blocks on a FIFO
// fails instead of hanging the suite.

func TestFIFOInPlaceOfTeamLock(t *testing.T) {
	t.Parallel()
	r := newSignedRepo(t)
	specialtest.Mkfifo(t, r.lockPath)
	specialtest.Within(t, func() {
		if _, err := Load(r.lockPath, nil); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("Load = %v, want an error wrapping ErrTampered", err)
		}
	})
}

// TestSymlinkedTeamLockRefused: git can check out a link, but a link may
// point outside the repository, at bytes no review saw.
func TestSymlinkedTeamLockRefused(t *testing.T) {
	t.Parallel()
	r := newSignedRepo(t)
	elsewhere := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(elsewhere, r.data, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(r.lockPath)
	if err := os.Symlink(elsewhere, r.lockPath); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(r.lockPath, nil); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Load = %v, want an error wrapping ErrTampered", err)
	}
	// The real file, named directly, loads.
	if _, err := Load(elsewhere, nil); err != nil {
		t.Errorf("Load of the real file: %v", err)
	}
}

func TestFIFOInPlaceOfManifest(t *testing.T) {
	t.Parallel()
	r := newSignedRepo(t)
	k := newKey(t)
	h := r.host(t, k)
	specialtest.Mkfifo(t, r.lockPath+ManifestSuffix)
	specialtest.Within(t, func() {
		if _, err := Load(r.lockPath, h); err == nil {
			t.Error("a lock loaded with a FIFO for its manifest")
		}
	})
}

func TestFIFOInPlaceOfLockEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "events.jsonl")
	specialtest.Mkfifo(t, fifo)
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep\n"), 0o600)
	link := filepath.Join(dir, "linked.jsonl")
	os.Symlink(victim, link)
	specialtest.Within(t, func() {
		for _, p := range []string{fifo, link} {
			ev, err := OpenEvents(p)
			if err == nil {
				ev.Close()
			}
			if !errors.Is(err, atomicfile.ErrNotRegular) {
				t.Errorf("OpenEvents(%s) = %v, want ErrNotRegular", filepath.Base(p), err)
			}
		}
	})
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("events went through the link: %q", b)
	}
}

func TestFIFOInPlaceOfSequenceStore(t *testing.T) {
	t.Parallel()
	m := &Manifest{Sequence: 1, LockDigest: "sha256:" + strings.Repeat("0", 64)}
	for _, name := range []string{"seq.json", "seq.json.flock"} {
		dir := t.TempDir()
		store := filepath.Join(dir, "seq.json")
		specialtest.Mkfifo(t, filepath.Join(dir, name))
		specialtest.Within(t, func() {
			if err := acceptSequence(store, "/x", m); !errors.Is(err, atomicfile.ErrNotRegular) {
				t.Errorf("%s a FIFO: %v, want ErrNotRegular", name, err)
			}
		})
	}
}

// TestHostConfigMayBeALink: the host config and its key files are the
// machine owner's, often placed by configuration management behind a link;
// a link to a regular file is followed, a FIFO is refused without
// blocking.
func TestHostConfigMayBeALink(t *testing.T) {
	t.Parallel()
	r := newSignedRepo(t)
	k := newKey(t)
	r.host(t, k)
	real := filepath.Join(r.hostDir, "host.json")
	link := filepath.Join(r.hostDir, "current.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadHostConfig(link); err != nil {
		t.Errorf("LoadHostConfig through a link: %v", err)
	}
	specialtest.Mkfifo(t, real)
	specialtest.Within(t, func() {
		for _, p := range []string{real, link} {
			if _, err := LoadHostConfig(p); !errors.Is(err, atomicfile.ErrNotRegular) {
				t.Errorf("LoadHostConfig(%s) = %v, want ErrNotRegular", filepath.Base(p), err)
			}
		}
	})
}
