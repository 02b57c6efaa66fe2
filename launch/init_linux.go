package launch

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// initStage is PID 1 of the sandbox (or, without namespaces, a subreaper
// in a process group of its own).
func initStage(ctrl *os.File, cfg *helperConfig) int {
	fail := func(format string, args ...any) int {
		sendMsg(ctrl, helperMsg{Kind: "error", Message: fmt.Sprintf(format, args...)}, -1)
		return 125
	}
	if cfg.Namespaced {
		if err := setupNamespaces(); err != nil {
			return fail("namespaces: %v", err)
		}
		if cfg.Network != NetworkNone {
			if err := loopbackUp(); err != nil {
				return fail("network: bringing up lo: %v", err)
			}
		}
		if cfg.Network == NetworkEgress {
			port, err := egressListener(ctrl)
			if err != nil {
				return fail("network: egress listener: %v", err)
			}
			cfg.ProxyPort = port
			cfg.Env = append(cfg.Env, proxyEnvFor(port)...)
		}
	} else if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail("cannot become a subreaper: %v", err)
	}
	// Descriptors mcpseal inherited without close-on-exec stay here; the
	// exec stage gets only those it is given.
	closeOnExecFrom(fdCtrl)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)

	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return fail("pipe: %v", err)
	}
	attr := &syscall.ProcAttr{
		Env:   []string{},
		Files: []uintptr{0, 1, 2, fdCtrl, cfgR.Fd(), fdExe, fdCwd, fdStatus},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	pid, err := syscall.ForkExec("/proc/self/exe", append(append([]string(nil), cfg.HelperArgv...), "exec"), attr)
	cfgR.Close()
	if err != nil {
		cfgW.Close()
		return fail("starting the exec stage: %v", err)
	}
	go func() { _ = writeConfig(cfgW, cfg) }()
	// The exec stage holds what it needs; the init keeps nothing of the
	// server's: not its executable, folder, status pipe or stdio.
	for _, fd := range []int{fdExe, fdCwd, fdStatus} {
		unix.Close(fd)
	}
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		for fd := 0; fd <= 2; fd++ {
			_ = unix.Dup2(int(null.Fd()), fd)
		}
		null.Close()
	}
	sendMsg(ctrl, helperMsg{Kind: "started", PID: pid}, -1)
	return reap(ctrl, cfg, pid, sigs)
}

// reap waits for every child. When the server (pid) ends, everything it
// left is killed; the init exits when nothing is left, with the server's
// status (128+signal when it was killed).
func reap(ctrl *os.File, cfg *helperConfig, pid int, sigs chan os.Signal) int {
	type reaped struct {
		pid int
		ws  syscall.WaitStatus
		ru  syscall.Rusage
	}
	done := make(chan reaped)
	go func() {
		for {
			var r reaped
			var err error
			r.pid, err = syscall.Wait4(-1, &r.ws, 0, &r.ru)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil {
				close(done)
				return
			}
			done <- r
		}
	}()
	var final helperMsg
	serverDone := false
	for {
		select {
		case sig := <-sigs:
			signalAll(cfg.Namespaced, sig.(syscall.Signal))
		case r, ok := <-done:
			if !ok {
				if !serverDone {
					final = helperMsg{Kind: "exit", Status: 125, Message: "the server vanished"}
				}
				sendMsg(ctrl, final, -1)
				if final.Signal != "" {
					return 128 + int(unix.SignalNum(final.Signal))
				}
				return final.Status
			}
			if r.pid == pid {
				serverDone = true
				final = exitMsg(r.ws, r.ru)
				signalAll(cfg.Namespaced, syscall.SIGKILL)
			} else if serverDone {
				final.Orphans++
				signalAll(cfg.Namespaced, syscall.SIGKILL)
			}
		}
	}
}

func exitMsg(ws syscall.WaitStatus, ru syscall.Rusage) helperMsg {
	m := helperMsg{Kind: "exit", CPUMillis: (ru.Utime.Nano() + ru.Stime.Nano()) / 1e6}
	if ws.Signaled() {
		m.Status = -1
		m.Signal = unix.SignalName(ws.Signal())
	} else {
		m.Status = ws.ExitStatus()
	}
	return m
}

// signalAll sends sig to every process of the sandbox but the init: in a
// PID namespace, kill(-1); without one, every descendant found through
// /proc (orphans were reparented here, the subreaper).
func signalAll(namespaced bool, sig syscall.Signal) {
	// kill(-1) reaches every process this one may signal: only as PID 1
	// of a namespace of its own is that just the sandbox.
	if namespaced && os.Getpid() == 1 {
		_ = syscall.Kill(-1, sig)
		return
	}
	for _, pid := range descendants(os.Getpid()) {
		_ = syscall.Kill(pid, sig)
	}
}

// maxDescendants bounds the walk of the process tree without namespaces;
// the process limit keeps real trees far smaller.
const maxDescendants = 1 << 16

func descendants(root int) []int {
	var out []int
	queue := []int{root}
	for len(queue) > 0 && len(out) < maxDescendants {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		for _, t := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/task/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

// setupNamespaces makes the mount tree private and mounts a /proc that
// shows only the sandbox's processes.
func setupNamespaces() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	_ = unix.Sethostname([]byte("mcpseal-sandbox"))
	return nil
}

// loopbackUp brings up lo in the sandbox's network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// egressListener listens on 127.0.0.1 inside the sandbox's network
// namespace and hands the listener to mcpseal, whose CONNECT proxy serves
// it from outside.
func egressListener(ctrl *os.File) (int, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		return 0, err
	}
	defer f.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	sendMsg(ctrl, helperMsg{Kind: "net", Port: port}, int(f.Fd()))
	return port, nil
}

// proxyEnvFor is what egress mode adds to the server's environment.
func proxyEnvFor(port int) []string {
	u := "http://127.0.0.1:" + strconv.Itoa(port)
	return []string{"HTTPS_PROXY=" + u, "HTTP_PROXY=" + u, "https_proxy=" + u, "http_proxy=" + u, "NO_PROXY=", "no_proxy=", "NODE_USE_ENV_PROXY=1"}
}
