//go:build linux

package siem

import (
	"net"

	"golang.org/x/sys/unix"
)

// unacked returns how many bytes written to c the peer's TCP has not
// acknowledged yet (SIOCOUTQ: unsent plus sent-but-unacknowledged); ok is
// false when that cannot be known (not a TCP connection).
func unacked(c net.Conn) (n int, ok bool) {
	tc, isTCP := c.(*net.TCPConn)
	if !isTCP {
		return 0, false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var ioErr error
	err = rc.Control(func(fd uintptr) { n, ioErr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) })
	if err != nil || ioErr != nil {
		return 0, false
	}
	return n, true
}
