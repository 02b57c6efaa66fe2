//go:build unix

package tlog

import (
	"crypto/rand"
	"errors"
	"github.com/mcpseal/mcpseal/internal/atomicfile/specialtest"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"golang.org/x/mod/sumdb/note"
)

// TestFIFOInPlaceOfSeenCheckpoint: the verifier's memory of the last
// checkpoint is state; a FIFO there is refused at once, not waited on and
// not taken for "never seen".
func TestFIFOInPlaceOfSeenCheckpoint(t *testing.T) {
	t.Parallel()
	_, vkey, err := note.GenerateKey(rand.Reader, "example.com/log")
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	s := SeenDir(t.TempDir())
	specialtest.Mkfifo(t, s.path(v))
	specialtest.Within(t, func() {
		if c, err := s.Load(v); !errors.Is(err, atomicfile.ErrNotRegular) {
			t.Errorf("Load = %v, %v; want ErrNotRegular", c, err)
		}
	})
}

func TestFIFOInLogFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	specialtest.Mkfifo(t, filepath.Join(dir, CheckpointFile))
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	specialtest.Within(t, func() {
		if _, err := d.ReadFile(CheckpointFile, MaxCheckpointNote); err == nil {
			t.Error("read a FIFO as the checkpoint")
		}
	})
}

func TestSigningKeyLinkOrFIFORefused(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if _, err := GenerateKey(rand.Reader, home, "example.com/log"); err != nil {
		t.Fatal(err)
	}
	p := KeyPath(home, "example.com/log")
	if _, _, err := LoadSigner(home, "example.com/log"); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(t.TempDir(), "key")
	if err := os.Rename(p, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, p); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadSigner(home, "example.com/log"); !errors.Is(err, atomicfile.ErrNotRegular) {
		t.Errorf("LoadSigner through a link = %v", err)
	}
	os.Remove(p)
	specialtest.Mkfifo(t, p)
	specialtest.Within(t, func() {
		if _, _, err := LoadSigner(home, "example.com/log"); !errors.Is(err, atomicfile.ErrNotRegular) {
			t.Errorf("LoadSigner of a FIFO = %v", err)
		}
	})
}
