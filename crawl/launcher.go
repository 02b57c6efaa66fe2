package crawl

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// A Command is a server to start: its argv, folder and environment.
type Command struct {
	Argv []string
	Dir  string
	// Env is the whole environment; nothing of the crawler's own is
	// passed on (no tokens, no credentials).
	Env []string
}

// A Process is a started server.
type Process interface {
	Stdin() io.WriteCloser
	Stdout() io.Reader
	// StderrTail returns the end of what the server wrote to stderr, for
	// classifying a failure (it is never shown or stored).
	StderrTail() []byte
	// Stop ends the server and everything it started, and waits for it.
	Stop()
}

// A Launcher starts servers. The crawler probes untrusted packages: a
// launcher that confines them (no network, a read-only view of the
// package, limits) plugs in here. DirectLauncher does not confine them.
type Launcher interface {
	Start(ctx context.Context, cmd Command) (Process, error)
	// Confined reports whether servers run in a sandbox, for the summary.
	Confined() bool
}

// DirectLauncher starts servers as plain child processes in their own
// process group, with the environment the Command gives and nothing
// else. It is NOT a sandbox: the server runs as the crawler's user, with
// its network and files.
type DirectLauncher struct{}

func (DirectLauncher) Confined() bool { return false }

// maxStderrTail is how much of a server's stderr is kept: enough to tell
// "missing API key" from a crash.
const maxStderrTail = 4 << 10

func (DirectLauncher) Start(ctx context.Context, c Command) (Process, error) {
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &directProcess{cmd: cmd, stdin: stdin, stdout: stdout, done: make(chan struct{})}
	cmd.Stderr = &p.tail
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { cmd.Wait(); close(p.done) }()
	go func() {
		select {
		case <-ctx.Done():
			p.kill()
		case <-p.done:
		}
	}()
	return p, nil
}

type directProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.Reader
	tail   tailBuffer
	done   chan struct{}
}

func (p *directProcess) Stdin() io.WriteCloser { return p.stdin }
func (p *directProcess) Stdout() io.Reader     { return p.stdout }
func (p *directProcess) StderrTail() []byte    { return p.tail.bytes() }

// stopGrace is how long a server may take to exit once its stdin closes.
const stopGrace = 2 * time.Second

func (p *directProcess) Stop() {
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(stopGrace):
	}
	p.kill()
	<-p.done
}

func (p *directProcess) kill() {
	if p.cmd.Process != nil {
		killGroup(p.cmd)
	}
}

// tailBuffer keeps the last maxStderrTail bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > maxStderrTail {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-maxStderrTail:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.buf)
}

// probeEnv is the environment a probed server gets: a PATH to find node,
// a throwaway HOME, and nothing else.
func probeEnv(home string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	return []string{"PATH=" + path, "HOME=" + home, "TMPDIR=" + filepath.Join(home, "tmp"), "NODE_ENV=production", "NO_COLOR=1"}
}
