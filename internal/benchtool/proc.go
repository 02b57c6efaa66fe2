package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpseal/mcpseal/internal/pathclock"
)

// tail keeps the last tailSize bytes written to it: a child's stderr,
// shown only when something fails.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 16 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailSize; over > 0 {
		t.buf = slices.Delete(t.buf, 0, over)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// environ is this process's environment with the benchmark's own
// variables set: MCPSEAL_HOME always, MCPSEAL_CPUPROFILE (profile) and
// MCPSEAL_MEMPROFILE (profile with .pprof replaced by .heap.pprof) only
// when profile is not empty, and removed otherwise, so an outer setting
// cannot leak into a measured run; MCPSEAL_PATHCLOCK is always removed
// (a stdio session that is clocked sets its own).
func environ(home, profile string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCPSEAL_HOME=") && !strings.HasPrefix(kv, "MCPSEAL_CPUPROFILE=") && !strings.HasPrefix(kv, "MCPSEAL_MEMPROFILE=") &&
			!strings.HasPrefix(kv, pathclock.Env+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, "MCPSEAL_HOME="+home)
	if profile != "" {
		env = append(env, "MCPSEAL_CPUPROFILE="+profile,
			"MCPSEAL_MEMPROFILE="+strings.TrimSuffix(profile, ".pprof")+".heap.pprof")
	}
	return env
}

// server is a process that serves HTTP on a loopback port it announces on
// stderr: the upstream, the bare floors, the gateway.
type server struct {
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:PORT
	stderr *tail
	done   chan struct{}
}

var listeningRE = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

// startServer starts argv and waits until it says where it listens.
func startServer(argv, env []string) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	s := &server{cmd: cmd, stderr: &tail{}, done: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); pw.Close(); close(s.done) }()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			fmt.Fprintln(s.stderr, sc.Text())
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		_, _ = io.Copy(s.stderr, pr)
	}()
	select {
	case s.url = <-found:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("%s exited before listening:\n%s", base(argv[0]), s.stderr)
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("%s not listening within 30s:\n%s", base(argv[0]), s.stderr)
	}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// stop sends SIGTERM and waits for the process, then SIGKILL after 10s.
func (s *server) stop() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return errors.New(base(s.cmd.Path) + " did not stop within 10s of SIGTERM")
	}
}

func base(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
