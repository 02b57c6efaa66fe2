//go:build unix

package launch

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// TestFIFOInPlaceOfLaunchProfile: a FIFO (or a link, or a folder) at a
// profile's name is refused at once; a profile decides what runs, and a
// reader that blocks would hang the session before it starts.
func TestFIFOInPlaceOfLaunchProfile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := ProfilesDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	plant := map[string]func(string) error{
		"fifo":   func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"folder": func(p string) error { return os.Mkdir(p, 0o700) },
		"link": func(p string) error {
			real := filepath.Join(t.TempDir(), "real.json")
			os.WriteFile(real, []byte("{}"), 0o600)
			return os.Symlink(real, p)
		},
	}
	for name, mk := range plant {
		if err := mk(filepath.Join(dir, name+".json")); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { _, _, err := Load(home, name); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, atomicfile.ErrNotRegular) {
				t.Errorf("%s: Load = %v, want ErrNotRegular", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Load blocked", name)
		}
	}
}

func TestSymlinkedProfilesFolderRefused(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.Symlink(t.TempDir(), ProfilesDir(home)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(home, "memory"); err == nil || errors.Is(err, ErrNoProfile) {
		t.Errorf("Load through a linked profiles folder = %v", err)
	}
}
