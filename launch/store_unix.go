//go:build unix

package launch

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// openOwnedFile opens path without following a final symbolic link and
// without blocking on a FIFO (atomicfile.Open), and checks that it is a
// regular file that only its owner (this user or root) may write.
func openOwnedFile(path string) (*os.File, error) {
	f, err := atomicfile.Open(path)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		return nil, fmt.Errorf("%s: %w; a profile must be a regular file", path, err)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := checkOwned(path, fi, false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkOwned refuses what others could change: a file or folder owned by
// someone other than this user or root, or writable by group or others.
func checkOwned(path string, fi os.FileInfo, dir bool) error {
	if dir != fi.IsDir() || !dir && !fi.Mode().IsRegular() {
		kind := "a regular file"
		if dir {
			kind = "a folder"
		}
		return fmt.Errorf("%s is not %s", path, kind)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: cannot read its owner", path)
	}
	if uid := uint32(os.Geteuid()); st.Uid != uid && st.Uid != 0 {
		return fmt.Errorf("%s is owned by another user (uid %d)", path, st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s may be written by other users (mode %04o); run chmod go-w on it", path, fi.Mode().Perm())
	}
	return nil
}

func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	return checkOwned(dir, fi, true)
}

// syncDir makes a rename in dir durable; a failure only weakens
// durability, so it is ignored.
func syncDir(dir string) { _ = atomicfile.SyncDir(dir) }
