//go:build unix

package atomicfile

import "syscall"

// Open flags that keep an open from following a final symbolic link or
// blocking on a FIFO.
const (
	noFollow = syscall.O_NOFOLLOW
	nonBlock = syscall.O_NONBLOCK
)
