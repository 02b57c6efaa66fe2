package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// How mcpseal starts its helper: itself, with HelperCommand.
var (
	helperExe  = "/proc/self/exe"
	helperArgv = []string{"mcpseal", HelperCommand}
)

// SetHelper makes the mcpseal binary at path the sandbox helper instead of
// this process's own executable. It exists for tests: a test binary built
// with -race cannot be the helper, because the race detector needs more
// memory than the limits the helper applies to itself before it executes
// the server. mcpseal itself never calls it.
func SetHelper(path string) { helperExe = path }

// noNamespaces makes launches skip the namespaces, as on a system
// without user namespaces. Tests set it.
var noNamespaces bool

// taskReserve is how many tasks the helper's init may use besides the
// server's (its Go runtime's threads): RLIMIT_NPROC counts every task of
// the user namespace, the init's too. (The pids cgroup holds only the
// server's.)
const taskReserve = 16

// sandboxNamespaces are the namespaces the helper's init is started in.
const sandboxNamespaces = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWNET

// startSandbox launches the verified executable under p's confinements.
// With probe, the helper confines itself, reports and exits without
// executing anything.
func startSandbox(p *Profile, v *verified, env []string, events func(Event), rep *Report, probe bool) (*Server, error) {
	saved := *rep
	saved.Enforced = slices.Clone(rep.Enforced)
	saved.NotEnforced = slices.Clone(rep.NotEnforced)
	srv, err := startSandboxOnce(p, v, env, events, rep, probe)
	if errors.Is(err, errHelperGone) {
		// A helper that dies before its first report, with nothing said,
		// is this machine failing for a moment (seen once under heavy
		// parallel load): launch the same verified descriptor once more,
		// with every confinement. A second failure refuses the launch.
		*rep = saved
		srv, err = startSandboxOnce(p, v, env, events, rep, probe)
	}
	return srv, err
}

func startSandboxOnce(p *Profile, v *verified, env []string, events func(Event), rep *Report, probe bool) (*Server, error) {
	k := probeKernel()
	cfg := helperConfig{
		Probe:       probe,
		Network:     p.Network.Mode,
		Argv:        p.Argv,
		Env:         env,
		ReadOnly:    readablePaths(p),
		ReadWrite:   p.Filesystem.ReadWrite,
		Limits:      p.Limits,
		Require:     p.Require,
		TaskReserve: taskReserve,
		Notify:      k.notify,
		HelperArgv:  helperArgv,
	}
	l := &launcher{p: p, rep: rep, events: events}
	defer l.cleanupOnError()

	if k.root {
		// The exec stage joins the cgroup itself, so that the helper's
		// init does not count against the server's limit.
		cg, err := newPidsCgroup(p.Limits.Processes)
		if err != nil {
			l.not(ConfineProcesses, "RLIMIT_NPROC does not bind root, and "+err.Error())
		} else {
			l.cgroup = cg
			cfg.CgroupProcs = cg.procsFile()
		}
	}
	if err := l.spawn(v, k.userNS && !noNamespaces); err != nil {
		return nil, err
	}
	cfg.Namespaced = l.namespaced
	if !k.root {
		switch {
		case l.namespaced && k.nprocPerNS:
			cfg.Nproc = true // the exec stage reports it
		case l.namespaced:
			l.not(ConfineProcesses, "this kernel counts RLIMIT_NPROC per user, not per user namespace (before Linux 5.14)")
		default:
			l.not(ConfineProcesses, "without a user namespace RLIMIT_NPROC would count every process of this user")
		}
	}
	if err := l.checkRequired(); err != nil {
		return nil, err
	}
	if err := writeConfig(l.cfgW, &cfg); err != nil {
		l.cfgW = nil
		return nil, fmt.Errorf("configuring the sandbox helper: %w", err)
	}
	l.cfgW = nil
	srv, err := l.handshake()
	if err != nil {
		return nil, err
	}
	return srv, nil
}

// readablePaths is the profile's read-only list plus what must be
// readable to run at all: the executable and the tree.
func readablePaths(p *Profile) []string {
	ro := append([]string{p.Executable.Path}, p.Filesystem.ReadOnly...)
	if p.Tree != nil {
		ro = append(ro, p.Tree.Path)
	}
	slices.Sort(ro)
	return slices.Compact(ro)
}

// spawn starts the helper's init in new namespaces, or without them when
// they cannot be created and neither namespaces nor the network policy is
// required.
func (l *launcher) spawn(v *verified, tryNS bool) error {
	if tryNS {
		err := l.start(v, true)
		if err == nil {
			l.namespaced = true
			l.enf(ConfineNamespaces, "user, mount, PID, IPC and UTS namespaces; what the server leaves is killed with it")
			l.enf(ConfineNetwork, networkDetail(l.p.Network))
			return nil
		}
		l.not(ConfineNamespaces, "cannot create namespaces here: "+errText(err))
	} else {
		l.not(ConfineNamespaces, "user namespaces are switched off (/proc/sys/user/max_user_namespaces is 0)")
	}
	l.not(ConfineNetwork, "the network policy needs a network namespace")
	if err := l.checkRequired(); err != nil {
		return err
	}
	return l.start(v, false)
}

func networkDetail(n Network) string {
	switch n.Mode {
	case NetworkLoopback:
		return "network namespace of its own, only lo up"
	case NetworkEgress:
		return fmt.Sprintf("network namespace with only lo; one route out, mcpseal's CONNECT proxy, to %d allowed destination(s)", len(n.Allow))
	}
	return "empty network namespace (lo down)"
}

// start starts the helper's init with its pipes and descriptors.
func (l *launcher) start(v *verified, namespaced bool) error {
	l.closeChildEnds()
	if err := l.makePipes(); err != nil {
		return err
	}
	uid, gid := os.Geteuid(), os.Getegid()
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if namespaced {
		attr.Cloneflags = sandboxNamespaces
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		// The init keeps these across its exec (it need not be uid 0 in
		// the namespace) to mount /proc and bring up lo; the exec stage
		// drops them all.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
	}
	cmd := &exec.Cmd{
		Path:        helperExe,
		Args:        helperArgv,
		Env:         []string{},
		Stdin:       l.child.in,
		Stdout:      l.child.out,
		Stderr:      l.child.err,
		ExtraFiles:  []*os.File{l.child.ctrl, l.child.cfg, v.exe, v.cwd, l.child.status},
		SysProcAttr: attr,
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	l.cmd = cmd
	l.closeChildEnds()
	return nil
}

func (l *launcher) enf(c Confinement, detail string) {
	l.enforced = append(l.enforced, Enforcement{Confinement: c, Detail: detail, Required: slices.Contains(l.p.Require, c)})
}

func (l *launcher) not(c Confinement, detail string) {
	l.notEnforced = append(l.notEnforced, Enforcement{Confinement: c, Detail: detail, Required: slices.Contains(l.p.Require, c)})
}

// checkRequired refuses when a required confinement the parent decides
// (namespaces, network, processes) cannot be enforced.
func (l *launcher) checkRequired() error {
	for _, e := range l.notEnforced {
		if e.Required {
			l.rep.NotEnforced = l.notEnforced
			return fmt.Errorf("%w: %s: %s", ErrUnenforceable, e.Confinement, e.Detail)
		}
	}
	return nil
}

// errHelperGone is returned when the helper ends before it reports.
var errHelperGone = errors.New("the sandbox helper exited before the server started")
