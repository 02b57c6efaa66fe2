//go:build unix

package httpgw

import (
	"io"
	"os"
	"syscall"
)

// tryWriter returns a write that never waits, for a server input that is
// a nonblocking pipe (a command route's child: package stdio keeps its
// ends nonblocking, waited on by the runtime's poller); nil for anything
// else (an upstream's adapter, a blocking descriptor).
func tryWriter(w io.Writer) func([]byte) (int, error) {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nonblocking := false
	if rc.Control(func(fd uintptr) {
		fl, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblocking = e == 0 && fl&syscall.O_NONBLOCK != 0
	}) != nil || !nonblocking {
		return nil
	}
	return func(p []byte) (n int, err error) {
		cerr := rc.Write(func(fd uintptr) bool {
			for n < len(p) {
				k, e := syscall.Write(int(fd), p[n:])
				switch {
				case e == syscall.EINTR:
					continue
				case e == syscall.EAGAIN:
					return true // full: the rest is the outbox goroutine's
				case e != nil:
					err = e
					return true
				case k <= 0:
					return true
				}
				n += k
			}
			return true
		})
		if err == nil && cerr != nil {
			err = cerr
		}
		return n, err
	}
}
