package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// execStage confines this process and executes the verified descriptor.
// Landlock, seccomp, capabilities and no_new_privs are properties of a
// thread, so everything from here to the exec runs on one locked thread.
func execStage(ctrl *os.File, cfg *helperConfig) int {
	runtime.LockOSThread()
	status := os.NewFile(fdStatus, "status")
	fail := func(format string, args ...any) int {
		b, _ := json.Marshal(helperMsg{Kind: "error", Message: fmt.Sprintf(format, args...)})
		_, _ = status.Write(b)
		return 126
	}
	// Only stdio reaches the server: the helper's own descriptors, and
	// any that mcpseal inherited without close-on-exec (from the client
	// that started it), close at the exec.
	closeOnExecFrom(fdCtrl)
	if err := unix.Fchdir(fdCwd); err != nil {
		return fail("cwd: %v", err)
	}
	unix.Close(fdCwd)

	c := &confiner{required: cfg.Require}
	if cfg.CgroupProcs != "" {
		// First, while the paths are still visible: everything the server
		// starts is counted from here.
		c.record(ConfineProcesses, fmt.Sprintf("pids cgroup: %d tasks", cfg.Limits.Processes), joinCgroup(cfg.CgroupProcs))
	}
	reserve := initTasks(cfg.TaskReserve) // before Landlock hides /proc
	c.record(ConfineNoNewPrivs, "no_new_privs set, every capability dropped", noNewPrivs())
	plan := landlockPlan{readOnly: cfg.ReadOnly, readWrite: cfg.ReadWrite, network: cfg.Network, proxyPort: cfg.ProxyPort}
	if c.ok(ConfineNoNewPrivs) {
		ll, err := restrictLandlock(plan)
		c.record(ConfineFilesystem, landlockDetail(ll), err)
	} else {
		c.record(ConfineFilesystem, "", errors.New("landlock needs no_new_privs"))
	}
	listener := -1
	if c.ok(ConfineNoNewPrivs) && seccompSupported() {
		var n int
		var err error
		listener, n, err = installSeccomp(cfg.Notify)
		detail := fmt.Sprintf("seccomp filter: %d system calls denied", n)
		if cfg.Notify {
			detail += ", each denial reported"
		}
		c.record(ConfineSyscalls, detail, err)
	} else {
		c.record(ConfineSyscalls, "", errors.New("seccomp is not available (or no_new_privs could not be set)"))
	}
	c.record(ConfineLimits, limitsDetail(cfg.Limits), setRlimits(cfg.Limits))
	if cfg.Nproc {
		// RLIMIT_NPROC counts every task of the user namespace: the
		// init's threads too. They are counted now; the server gets the
		// rest.
		n := cfg.Limits.Processes + reserve
		err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: uint64(n), Max: uint64(n)})
		c.record(ConfineProcesses, fmt.Sprintf("RLIMIT_NPROC in its own user namespace: %d tasks", cfg.Limits.Processes), err)
	}
	// A probe reports everything and lets mcpseal judge; a launch stops
	// here, before anything of the server runs.
	if missing := c.missingRequired(); missing != nil && !cfg.Probe {
		return fail("%v: %s: %s", ErrUnenforceable, missing.Confinement, missing.Detail)
	}
	sendMsg(ctrl, helperMsg{Kind: "confined", Enforced: c.enforced, NotEnforced: c.notEnforced}, listener)
	if listener >= 0 {
		unix.Close(listener)
	}
	if cfg.Probe {
		return 0
	}
	err := execveat(fdExe, cfg.Argv, cfg.Env)
	return fail("executing the verified descriptor: %v", err)
}

// closeOnExecFrom marks every descriptor from fd up close-on-exec:
// close_range (Linux 5.11), else each one /proc lists.
func closeOnExecFrom(fd int) {
	if err := unix.CloseRange(uint(fd), ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return
	}
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n >= fd {
			unix.CloseOnExec(n)
		}
	}
}

// initTasks is how many tasks the sandbox's init runs (its threads), read
// from the sandbox's own /proc; fallback when that cannot be read.
func initTasks(fallback int64) int64 {
	b, err := os.ReadFile("/proc/1/status")
	if err != nil {
		return fallback
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n > 0 {
				return n
			}
		}
	}
	return fallback
}

// confiner collects what the exec stage enforced.
type confiner struct {
	required              []Confinement
	enforced, notEnforced []Enforcement
}

func (c *confiner) record(what Confinement, detail string, err error) {
	e := Enforcement{Confinement: what, Detail: detail, Required: slices.Contains(c.required, what)}
	if err != nil {
		e.Detail = err.Error()
		c.notEnforced = append(c.notEnforced, e)
		return
	}
	c.enforced = append(c.enforced, e)
}

func (c *confiner) ok(what Confinement) bool {
	return slices.ContainsFunc(c.enforced, func(e Enforcement) bool { return e.Confinement == what })
}

func (c *confiner) missingRequired() *Enforcement {
	for i := range c.notEnforced {
		if c.notEnforced[i].Required {
			return &c.notEnforced[i]
		}
	}
	return nil
}

// noNewPrivs sets no_new_privs and drops every capability: the ambient
// set, the bounding set (so that even a uid 0 inside the namespace gains
// nothing on exec) and the thread's own sets.
func noNewPrivs() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	for c := 0; c <= 63; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); errors.Is(err, unix.EINVAL) {
			break // past the last capability this kernel knows
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("dropping capabilities: %w", err)
	}
	return checkNoPrivs()
}

// checkNoPrivs verifies what noNewPrivs claims, from the kernel's view.
func checkNoPrivs() error {
	if v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || v != 1 {
		return errors.New("no_new_privs is not set")
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading capabilities: %w", err)
	}
	for _, d := range data {
		if d.Effective|d.Permitted|d.Inheritable != 0 {
			return errors.New("capabilities remain")
		}
	}
	if os.Geteuid() == 0 {
		for c := 0; c <= unix.CAP_LAST_CAP; c++ {
			if v, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err == nil && v == 1 {
				return errors.New("the bounding set could not be emptied, and uid 0 would regain capabilities on exec")
			}
		}
	}
	return nil
}

// setRlimits applies the per-process limits, and forbids core dumps (a
// core holds the server's memory).
func setRlimits(l Limits) error {
	set := []struct {
		res int
		cur uint64
		max uint64
	}{
		{unix.RLIMIT_DATA, uint64(l.MemoryBytes), uint64(l.MemoryBytes)},
		// SIGXCPU at the limit, SIGKILL one second later (a program may
		// ignore SIGXCPU; the Go runtime does).
		{unix.RLIMIT_CPU, uint64(l.CPUSeconds), uint64(l.CPUSeconds) + 1},
		{unix.RLIMIT_NOFILE, uint64(l.OpenFiles), uint64(l.OpenFiles)},
		{unix.RLIMIT_FSIZE, uint64(l.FileSizeBytes), uint64(l.FileSizeBytes)},
		{unix.RLIMIT_CORE, 0, 0},
	}
	for _, s := range set {
		if err := unix.Setrlimit(s.res, &unix.Rlimit{Cur: s.cur, Max: s.max}); err != nil {
			return fmt.Errorf("setrlimit %d: %w", s.res, err)
		}
	}
	return nil
}

func limitsDetail(l Limits) string {
	return fmt.Sprintf("rlimits: memory %d bytes (RLIMIT_DATA), CPU %d s, %d open files, files up to %d bytes, no core dumps",
		l.MemoryBytes, l.CPUSeconds, l.OpenFiles, l.FileSizeBytes)
}

func landlockDetail(r landlockResult) string {
	d := fmt.Sprintf("landlock ABI %d: %d path rule(s), everything else unreadable", r.abi, r.paths)
	if r.net {
		d += "; TCP bind and connect restricted"
	}
	if r.scoped {
		d += "; signals and abstract unix sockets scoped"
	}
	if len(r.missing) > 0 {
		d += fmt.Sprintf("; %d listed path(s) do not exist", len(r.missing))
	}
	return d
}

// execveat executes the open descriptor fd (AT_EMPTY_PATH): the bytes
// that were hashed, whatever the path names now.
func execveat(fd int, argv, env []string) error {
	empty, err := unix.BytePtrFromString("")
	if err != nil {
		return err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return err
	}
	_, _, errno := unix.Syscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(empty)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])), unix.AT_EMPTY_PATH, 0)
	return errno
}
