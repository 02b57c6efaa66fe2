//go:build unix

package tlog

import "syscall"

// nonBlock keeps an open from blocking on a FIFO.
const nonBlock = syscall.O_NONBLOCK
