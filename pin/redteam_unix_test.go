//go:build unix

package pin

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO (or anything but a folder) at pins/seen or pins is documented to
// be refused with an error wrapping ErrTampered, like a link there. Open
// returns MkdirAll's plain "not a directory" instead, which callers report
// as an ordinary I/O failure, not a tampered store.
func TestSpecialFileInPlaceOfPinsFolderIsTampered(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"pins", filepath.Join("pins", "seen")} {
		home := t.TempDir()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, sub)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(home, sub), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Open(home)
		if !errors.Is(err, ErrTampered) {
			t.Errorf("Open with a FIFO at %s = %v, want an error wrapping ErrTampered", sub, err)
		}
	}
}
