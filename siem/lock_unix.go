//go:build unix

package siem

import (
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes f's exclusive lock without waiting; false when another
// process (or another open file in this one) holds it.
func tryLock(f *os.File) bool {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			return err == nil
		}
	}
}
