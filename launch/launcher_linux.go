package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// helperTimeout bounds the helper's start: namespaces, confinement, exec.
// It takes tens of milliseconds; a helper that takes seconds is stuck.
const helperTimeout = 15 * time.Second

// launcher holds a launch in progress; on error, cleanupOnError undoes it.
type launcher struct {
	p      *Profile
	rep    *Report
	events func(Event)

	cmd        *exec.Cmd
	namespaced bool
	cgroup     *pidsCgroup

	enforced, notEnforced []Enforcement

	// mcpseal's ends
	in      *os.File // the server's stdin
	out     *os.File // its stdout
	errR    *os.File // its stderr
	ctrl    *net.UnixConn
	cfgW    *os.File
	statusR *os.File
	// the helper's ends, closed once it has started
	child struct{ in, out, err, ctrl, cfg, status *os.File }

	done bool // the launch succeeded: nothing to undo
	sup  *supervisor
	egr  *egressProxy
}

// makePipes creates the server's stdio pipes, the control socket, and the
// configuration and status pipes (closing those of an earlier attempt).
func (l *launcher) makePipes() error {
	l.closeParentEnds()
	var err error
	pipe := func(r, w **os.File) {
		if err == nil {
			*r, *w, err = os.Pipe()
		}
	}
	pipe(&l.child.in, &l.in)
	pipe(&l.out, &l.child.out)
	pipe(&l.errR, &l.child.err)
	pipe(&l.child.cfg, &l.cfgW)
	pipe(&l.statusR, &l.child.status)
	if err != nil {
		return err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	l.child.ctrl = os.NewFile(uintptr(fds[1]), "ctrl")
	f := os.NewFile(uintptr(fds[0]), "ctrl")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return err
	}
	l.ctrl = c.(*net.UnixConn)
	return nil
}

func (l *launcher) closeChildEnds() {
	for _, f := range []**os.File{&l.child.in, &l.child.out, &l.child.err, &l.child.ctrl, &l.child.cfg, &l.child.status} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
}

// cleanupOnError kills the helper and releases everything when the launch
// did not succeed.
func (l *launcher) cleanupOnError() {
	if l.done {
		return
	}
	l.closeChildEnds()
	if l.cmd != nil {
		_ = l.cmd.Process.Kill()
		_ = l.cmd.Wait()
	}
	l.closeParentEnds()
	if l.sup != nil {
		l.sup.stop()
	}
	if l.egr != nil {
		l.egr.close()
	}
	if l.cgroup != nil {
		l.cgroup.remove()
	}
}

func (l *launcher) closeParentEnds() {
	for _, f := range []**os.File{&l.in, &l.out, &l.errR, &l.cfgW, &l.statusR} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	if l.ctrl != nil {
		l.ctrl.Close()
		l.ctrl = nil
	}
}

type ctrlMsg struct {
	m  helperMsg
	fd *os.File // a descriptor that came with it
}

// readCtrl delivers the helper's messages until the socket closes.
func (l *launcher) readCtrl(msgs chan<- ctrlMsg) {
	defer close(msgs)
	buf := make([]byte, maxHelperMsg)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := l.ctrl.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			return
		}
		var cm ctrlMsg
		if fds := parseRights(oob[:oobn]); len(fds) > 0 {
			cm.fd = os.NewFile(uintptr(fds[0]), "from-helper")
			for _, fd := range fds[1:] {
				unix.Close(fd)
			}
		}
		if json.Unmarshal(buf[:n], &cm.m) != nil {
			cm.m = helperMsg{Kind: "error", Message: "the sandbox helper sent an unreadable message"}
		}
		msgs <- cm
	}
}

func parseRights(oob []byte) []int {
	cmsgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, c := range cmsgs {
		if r, err := unix.ParseUnixRights(&c); err == nil {
			fds = append(fds, r...)
		}
	}
	return fds
}

// readStatus reads the exec stage's status pipe: EOF with nothing read
// means the verified descriptor was executed (or, probing, that the stage
// exited after reporting).
func (l *launcher) readStatus(result chan<- []byte) {
	b, _ := io.ReadAll(io.LimitReader(l.statusR, maxHelperMsg))
	result <- b
}

// handshake waits until the server runs (or the probe is done) and
// returns the Server.
func (l *launcher) handshake() (*Server, error) {
	msgs := make(chan ctrlMsg, 8)
	go l.readCtrl(msgs)
	status := make(chan []byte, 1)
	go l.readStatus(status)
	timeout := time.NewTimer(helperTimeout)
	defer timeout.Stop()
	var (
		confined, executed bool
		egressLn           *os.File
	)
	defer func() { closeFile(egressLn) }()
	for !(confined && executed) {
		select {
		case cm, ok := <-msgs:
			if !ok {
				return nil, errHelperGone
			}
			switch cm.m.Kind {
			case "error":
				closeFile(cm.fd)
				return nil, helperError(cm.m.Message)
			case "net":
				egressLn = cm.fd
			case "confined":
				confined = true
				l.enforced = append(l.enforced, cm.m.Enforced...)
				l.notEnforced = append(l.notEnforced, cm.m.NotEnforced...)
				if cm.fd != nil {
					fd, err := unix.Dup(int(cm.fd.Fd()))
					cm.fd.Close()
					if err != nil {
						return nil, err
					}
					if l.sup, err = newSupervisor(fd, l.events); err != nil {
						return nil, err
					}
				}
			default:
				closeFile(cm.fd)
			}
		case b := <-status:
			if len(b) > 0 {
				var m helperMsg
				if json.Unmarshal(b, &m) != nil {
					m.Message = "the sandbox helper failed"
				}
				return nil, helperError(m.Message)
			}
			executed = true
			status = nil
		case <-timeout.C:
			return nil, fmt.Errorf("the sandbox helper did not start the server within %v", helperTimeout)
		}
	}
	if err := l.finishReport(); err != nil {
		return nil, err
	}
	if egressLn != nil {
		var err error
		l.egr, err = newEgressProxy(egressLn, l.p.Network.Allow, l.events)
		egressLn = nil // the proxy owns it now, or it was closed
		if err != nil {
			return nil, err
		}
	}
	l.done = true
	return newServer(l, msgs), nil
}

func closeFile(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// helperError turns the helper's message into an error; a refusal for a
// required confinement wraps ErrUnenforceable.
func helperError(msg string) error {
	if rest, ok := strings.CutPrefix(msg, ErrUnenforceable.Error()+": "); ok {
		return fmt.Errorf("%w: %s", ErrUnenforceable, rest)
	}
	return errors.New("sandbox: " + msg)
}

// finishReport fills the report's partition of AllConfinements, and
// refuses if a required one ended up not enforced.
func (l *launcher) finishReport() error {
	l.rep.Enforced, l.rep.NotEnforced = nil, nil
	for _, c := range AllConfinements {
		if e, ok := findEnf(l.enforced, c); ok {
			l.rep.Enforced = append(l.rep.Enforced, e)
		} else if e, ok := findEnf(l.notEnforced, c); ok {
			l.rep.NotEnforced = append(l.rep.NotEnforced, e)
		} else {
			l.rep.NotEnforced = append(l.rep.NotEnforced, Enforcement{Confinement: c, Detail: "not applied", Required: slices.Contains(l.p.Require, c)})
		}
	}
	for _, e := range l.rep.NotEnforced {
		if e.Required {
			return fmt.Errorf("%w: %s: %s", ErrUnenforceable, e.Confinement, e.Detail)
		}
	}
	return nil
}

func findEnf(list []Enforcement, c Confinement) (Enforcement, bool) {
	for _, e := range list {
		if e.Confinement == c {
			return e, true
		}
	}
	return Enforcement{}, false
}
