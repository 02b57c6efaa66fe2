//go:build unix

package tlog

import (
	"os"

	"golang.org/x/sys/unix"
)

// Lock takes the log folder's writer lock (flock on .lock), waiting for
// it, so that two appends never interleave.
func (d *Dir) Lock() (func(), error) {
	f, err := d.root.OpenFile(lockFile, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
