package launch

import (
	"errors"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// struct seccomp_notif and seccomp_notif_resp (linux/seccomp.h).
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// maxReportsPerSyscall bounds the events for one denied system call: a
// server that loops on ptrace must not flood stderr or the audit log. The
// rest are counted and reported once when the supervisor stops.
const maxReportsPerSyscall = 5

// supervisor answers the seccomp filter's notifications: every denied call
// gets EPERM and becomes an event.
type supervisor struct {
	fd           int
	stopR, stopW *os.File
	events       func(Event)
	done         chan struct{}

	mu     sync.Mutex
	counts map[string]int
}

func newSupervisor(fd int, events func(Event)) (*supervisor, error) {
	r, w, err := os.Pipe()
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	s := &supervisor{fd: fd, stopR: r, stopW: w, events: events, done: make(chan struct{}), counts: map[string]int{}}
	go s.run()
	return s, nil
}

func (s *supervisor) run() {
	defer close(s.done)
	stopFd := int32(s.stopR.Fd())
	for {
		pfd := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}, {Fd: stopFd, Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if pfd[1].Revents != 0 {
			return
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			// POLLHUP: no task uses the filter any more.
			<-s.waitStop()
			return
		}
		var req seccompNotif
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&req))); errno != 0 {
			if errno == unix.EINTR || errno == unix.ENOENT {
				continue
			}
			return
		}
		resp := seccompNotifResp{id: req.id, error: -int32(unix.EPERM)}
		// ENOENT: the caller died meanwhile; nothing to answer.
		_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
		s.report(syscallName(req.nr), int(req.pid))
	}
}

// waitStop returns a channel closed when stop is called.
func (s *supervisor) waitStop() <-chan struct{} {
	c := make(chan struct{})
	go func() {
		var b [1]byte
		_, _ = s.stopR.Read(b[:])
		close(c)
	}()
	return c
}

func (s *supervisor) report(name string, pid int) {
	s.mu.Lock()
	s.counts[name]++
	n := s.counts[name]
	s.mu.Unlock()
	if n <= maxReportsPerSyscall && s.events != nil {
		s.events(Event{Kind: EventDeniedSyscall, Syscall: name, PID: pid, Count: 1})
	}
}

// stop ends the supervisor, closes the listener (a call still pending
// then fails with ENOSYS) and reports the denials that were only counted.
func (s *supervisor) stop() {
	s.stopW.Close()
	<-s.done
	unix.Close(s.fd)
	s.stopR.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, n := range s.counts {
		if n > maxReportsPerSyscall && s.events != nil {
			s.events(Event{Kind: EventDeniedSyscall, Syscall: name, Count: n - maxReportsPerSyscall})
		}
	}
}
