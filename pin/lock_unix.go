//go:build unix

package pin

import (
	"os"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"golang.org/x/sys/unix"
)

// lockFile takes an advisory lock on f, waiting for it: exclusive for
// writers, shared for readers. Closing f releases it.
func lockFile(f *os.File, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}

// syncDir fsyncs a folder so that a rename or create in it is durable.
func syncDir(dir string) error { return atomicfile.SyncDir(dir) }
