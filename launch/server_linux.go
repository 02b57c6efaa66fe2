package launch

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Server is a launched, confined server: the sandbox's init and what runs
// under it. It implements stdio.Server.
type Server struct {
	cmd        *exec.Cmd // the helper's init
	namespaced bool
	stdin      *stdinWriter
	stdout     *stdoutReader
	stderr     *stderrReader
	lim        *limiter
	ctrl       *net.UnixConn
	msgs       <-chan ctrlMsg
	sup        *supervisor
	egr        *egressProxy
	cgroup     *pidsCgroup
	events     func(Event)
	cpuLimit   int64
	processes  int64

	mu       sync.Mutex
	exited   bool // the init has exited (it may not be reaped yet)
	waitOnce sync.Once
	waitErr  error
}

func newServer(l *launcher, msgs <-chan ctrlMsg) *Server {
	s := &Server{
		cmd: l.cmd, namespaced: l.namespaced, ctrl: l.ctrl, msgs: msgs,
		sup: l.sup, egr: l.egr, cgroup: l.cgroup, events: l.events, cpuLimit: l.p.Limits.CPUSeconds, processes: l.p.Limits.Processes,
	}
	s.lim = newLimiter(l.p.Limits, s.Kill, l.events)
	s.stdin = &stdinWriter{w: l.in}
	s.stdin.fr.emit = s.lim.sent
	s.stdout = &stdoutReader{r: l.out, lim: s.lim}
	s.stdout.fr.emit = s.lim.received
	s.stderr = &stderrReader{r: l.errR, lim: s.lim}
	l.statusR.Close()
	return s
}

func (s *Server) Stdin() io.WriteCloser { return s.stdin }
func (s *Server) Stdout() io.Reader     { return s.stdout }
func (s *Server) Stderr() io.Reader     { return s.stderr }

// Terminate sends SIGTERM to the sandbox's init, which passes it to every
// process of the sandbox.
func (s *Server) Terminate() { _ = s.cmd.Process.Signal(syscall.SIGTERM) }

// Kill ends the sandbox: SIGKILL to its init, whose death kills every
// process in its PID namespace. Without namespaces, every descendant of
// the init (orphans were reparented to it, a subreaper) and every process
// in the sandbox's pids cgroup is killed first, until none is left: a
// process that left the process group is found all the same.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.namespaced && !s.exited {
		// The init has not been reaped, so its pid and process group id
		// are still its own and cannot name anyone else's processes.
		init := s.cmd.Process.Pid
		for round := 0; round < killRounds; round++ {
			pids := descendants(init)
			if s.cgroup != nil {
				pids = append(pids, s.cgroup.procs()...)
			}
			if len(pids) == 0 {
				break
			}
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		_ = syscall.Kill(-init, syscall.SIGKILL)
	}
	_ = s.cmd.Process.Kill()
}

// killRounds bounds the rounds of killing the tree without namespaces; a
// round kills everything found, so processes that fork in between are
// found in the next one.
const killRounds = 20

// ExitError reports how the server ended when it did not exit with 0.
type ExitError struct {
	Status int    // -1 when killed by a signal
	Signal string // "SIGKILL"…
	Reason string // a limit that explains it, or ""
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("the server exited with status %d", e.Status)
	if e.Signal != "" {
		msg = "the server was killed by " + e.Signal
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Wait waits for the sandbox to end and reports how the server exited.
func (s *Server) Wait() error {
	s.waitOnce.Do(func() { s.waitErr = s.wait() })
	return s.waitErr
}

func (s *Server) wait() error {
	pid := s.cmd.Process.Pid
	var info unix.Siginfo
	for {
		// WNOWAIT: learn of the exit without reaping, so that Kill can
		// still use the process group id safely until exited is set.
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			break
		}
	}
	s.mu.Lock()
	s.exited = true
	s.mu.Unlock()
	_ = s.cmd.Wait() // how the init ended is in its report, or its signal
	s.lim.close()
	exit := s.drainCtrl()
	if s.sup != nil {
		s.sup.stop()
	}
	if s.egr != nil {
		s.egr.close()
	}
	if s.cgroup != nil {
		if n := s.cgroup.refused(); n > 0 && s.events != nil {
			s.events(Event{Kind: EventLimit, Limit: "processes", Value: s.processes, Action: "refused: new processes over the limit", Count: int(n)})
		}
		s.cgroup.remove()
	}
	return s.exitError(exit)
}

// drainCtrl reads the helper's last messages: its report of the exit.
func (s *Server) drainCtrl() *helperMsg {
	var exit *helperMsg
	// Why 10 s: the init sends its report before it exits, so it is in
	// the socket already; this only bounds a helper that died without it,
	// and on a loaded machine the reading goroutine can be slow to run.
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for {
		select {
		case cm, ok := <-s.msgs:
			if !ok {
				s.ctrl.Close()
				return exit
			}
			closeFile(cm.fd)
			if cm.m.Kind == "exit" {
				m := cm.m
				exit = &m
			}
		case <-timer.C:
			s.ctrl.Close()
			return exit
		}
	}
}

// reasonNoReport is the ExitError reason of a sandbox whose init ended
// without reporting how the server did.
const reasonNoReport = "the sandbox ended without a report"

// endedUnreported reports whether err says the sandbox ended without its
// exit report.
func endedUnreported(err error) bool {
	var ee *ExitError
	return errors.As(err, &ee) && ee.Reason == reasonNoReport
}

func (s *Server) exitError(exit *helperMsg) error {
	s.lim.mu.Lock()
	tripped := s.lim.tripped
	s.lim.mu.Unlock()
	ev := Event{Kind: EventExit, Count: 1}
	if exit == nil {
		ev.Status, ev.Reason = -1, reasonNoReport
		if ps := s.cmd.ProcessState; ps != nil {
			if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				ev.Signal, ev.Reason = unix.SignalName(ws.Signal()), "the sandbox was stopped"
			}
		}
	} else {
		ev.Status, ev.Signal, ev.Orphans = exit.Status, exit.Signal, exit.Orphans
		if exit.Signal == "SIGKILL" || exit.Signal == "SIGXCPU" {
			if exit.CPUMillis >= s.cpuLimit*1000 {
				ev.Reason = fmt.Sprintf("CPU limit of %d s reached", s.cpuLimit)
				if s.events != nil {
					s.events(Event{Kind: EventLimit, Limit: "cpu_seconds", Value: s.cpuLimit, Action: "killed", Count: 1})
				}
			}
		}
	}
	if tripped != "" {
		ev.Reason = "limit " + tripped + " reached"
	}
	if s.events != nil {
		s.events(ev)
	}
	if exit != nil && exit.Status == 0 && exit.Signal == "" {
		return nil
	}
	return &ExitError{Status: ev.Status, Signal: ev.Signal, Reason: ev.Reason}
}
