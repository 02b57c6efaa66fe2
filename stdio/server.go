package stdio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// Server is the server side of a session: a child process, or an adapter
// that carries the frames to something else (a sandboxed child, a remote
// Streamable HTTP server). Frames are newline-delimited JSON-RPC.
type Server interface {
	// Stdin receives the frames for the server; closing it tells the
	// server the client is done.
	Stdin() io.WriteCloser
	// Stdout yields the server's frames; EOF means the server is gone.
	Stdout() io.Reader
	// Stderr yields the server's diagnostics; nil when it has none.
	Stderr() io.Reader
	// Wait blocks until the server has stopped and reports how.
	Wait() error
	// Terminate asks the server to stop (SIGTERM to a child's process
	// group); Kill forces it, and everything it started, to stop.
	Terminate()
	Kill()
}

// StartChild starts argv as a child process in its own process group, with
// env (nil inherits mcpseal's) and dir. No shell is involved.
func StartChild(argv, env []string, dir string) (Server, error) {
	if len(argv) == 0 {
		return nil, errors.New("no server command")
	}
	path, err := lookPath(argv[0])
	if err != nil {
		if u := errors.Unwrap(err); u != nil {
			err = u
		}
		return nil, fmt.Errorf("cannot find server command %q: %w", argv[0], err)
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Dir: dir}
	isolate(cmd)
	if err := prepareShim(cmd); err != nil {
		return nil, err
	}
	in, out, errOut, err := startChild(cmd)
	if err != nil {
		return nil, err
	}
	return &child{cmd: cmd, in: in, out: out, err: errOut}, nil
}

type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out io.ReadCloser
	err io.ReadCloser
}

func (c *child) Stdin() io.WriteCloser { return c.in }
func (c *child) Stdout() io.Reader     { return c.out }
func (c *child) Stderr() io.Reader     { return c.err }
func (c *child) Wait() error           { return c.cmd.Wait() }
func (c *child) Terminate()            { terminate(c.cmd) }
func (c *child) Kill()                 { kill(c.cmd) }

// startChild starts cmd with three pipes and returns mcpseal's ends.
//
// mcpseal's ends stay non-blocking, waited on by the runtime's poller.
// (Blocking reads were measured: they save a little per round trip but can
// leave every P parked in a system call, and then runnable goroutines wait
// for sysmon — stalls of tens of milliseconds; see docs/performance.md.)
func startChild(cmd *exec.Cmd) (in io.WriteCloser, out, errOut io.ReadCloser, err error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	files = append(files, inR, inW)
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	files = append(files, outR, outW)
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	files = append(files, errR, errW)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, nil, nil, fmt.Errorf("cannot start server: %w", err)
	}
	// The child holds its own copies now.
	inR.Close()
	outW.Close()
	errW.Close()
	return inW, outR, errR, nil
}

// Nothing is a server that is never started (the host refused it before
// connecting): what the gate would send it is discarded, and its output
// ends when the client closes, so the gate can still answer every request
// with the refusal.
func Nothing() Server {
	r, w := io.Pipe()
	return &nothing{out: r, in: w, done: make(chan struct{})}
}

type nothing struct {
	out  *io.PipeReader
	in   *io.PipeWriter
	once sync.Once
	done chan struct{}
}

func (n *nothing) stop() {
	n.once.Do(func() {
		n.in.Close()
		close(n.done)
	})
}

func (n *nothing) Stdin() io.WriteCloser { return nothingIn{n} }
func (n *nothing) Stdout() io.Reader     { return n.out }
func (n *nothing) Stderr() io.Reader     { return nil }
func (n *nothing) Wait() error           { <-n.done; return nil }
func (n *nothing) Terminate()            { n.stop() }
func (n *nothing) Kill()                 { n.stop() }

type nothingIn struct{ n *nothing }

func (w nothingIn) Write(p []byte) (int, error) { return len(p), nil }
func (w nothingIn) Close() error                { w.n.stop(); return nil }
