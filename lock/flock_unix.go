//go:build unix

package lock

import (
	"os"
	"syscall"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// lockFile takes an exclusive advisory lock on f, waiting for it.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func syncDir(dir string) error { return atomicfile.SyncDir(dir) }
