// Package stdio runs a stdio MCP server as a child process behind the
// session gate: the client speaks newline-delimited JSON-RPC on mcpseal's
// stdin and stdout, the server on the child's.
//
// Frames are read with a size limit and handed to the gate one at a time;
// what the gate returns is queued for two writer goroutines. While the
// queue towards one side is over its soft limit the loop stops reading
// from the other side, so a peer that does not read slows its counterpart
// down instead of growing a buffer, and neither direction can deadlock the
// other. The child's stderr passes through, bounded. When the client
// closes stdin the child's stdin is closed, then the child's process group
// gets SIGTERM and SIGKILL, each after a bounded wait.
package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// Defaults for Config's zero fields.
const (
	// DefaultStopGrace is how long the child may take to exit after its
	// stdin closes before it gets SIGTERM, and again before SIGKILL.
	DefaultStopGrace = 2 * time.Second
	// DefaultMaxStderr bounds the child's stderr passed through in one
	// session; a server that logs more is cut off, with a note.
	DefaultMaxStderr = 64 << 20
	// softQueueBytes is how much may wait for one writer before the loop
	// stops reading from the other side.
	softQueueBytes = 4 << 20
	// softQueueFrames bounds the frames waiting for one writer likewise.
	softQueueFrames = 4096
)

// Config configures Run.
type Config struct {
	Argv []string
	// Env is the child's environment; nil inherits mcpseal's.
	Env []string
	Dir string
	// MaxFrame bounds one message either way (jsonrpc.DefaultMaxFrame).
	MaxFrame int
	Gate     *gate.Session

	ClientIn  io.Reader // mcpseal's stdin
	ClientOut io.Writer // mcpseal's stdout: the protocol channel only
	Stderr    io.Writer // where the child's stderr goes
	Logger    *slog.Logger

	StopGrace time.Duration
	MaxStderr int64
}

// Result says how the session ended.
type Result struct {
	Gate gate.Status
	// ServerExited is true when the server went away before the client
	// closed its side.
	ServerExited bool
	// ServerErr is the child's exit error, if any.
	ServerErr error
}

type event struct {
	from  gate.Side // the side that sent it: ToClient means "from the client"
	frame []byte
	err   error // io.EOF, jsonrpc.ErrFrameTooLarge or a read error
}

// Run starts the server and proxies until the client closes its side (or
// the server exits). It returns an error only when the server could not be
// started.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = jsonrpc.DefaultMaxFrame
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.MaxStderr <= 0 {
		cfg.MaxStderr = DefaultMaxStderr
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Argv) == 0 {
		return Result{}, errors.New("no server command")
	}
	path, err := exec.LookPath(cfg.Argv[0])
	if err != nil {
		return Result{}, fmt.Errorf("cannot find server command %q: %w", cfg.Argv[0], errors.Unwrap(err))
	}
	cmd := &exec.Cmd{Path: path, Args: cfg.Argv, Env: cfg.Env, Dir: cfg.Dir}
	isolate(cmd)
	childIn, err := cmd.StdinPipe()
	if err != nil {
		return Result{}, err
	}
	childOut, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, err
	}
	childErr, err := cmd.StderrPipe()
	if err != nil {
		return Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("cannot start server: %w", err)
	}
	p := &proxy{cfg: cfg, cmd: cmd, log: cfg.Logger}
	return p.run(ctx, childIn, childOut, childErr), nil
}

type proxy struct {
	cfg Config
	cmd *exec.Cmd
	log *slog.Logger
}

func (p *proxy) run(ctx context.Context, childIn io.WriteCloser, childOut, childErr io.ReadCloser) Result {
	var res Result
	kick := make(chan struct{}, 1)
	toClient := newQueue(kick)
	toServer := newQueue(kick)

	var wg sync.WaitGroup
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		p.passStderr(childErr)
	}()

	// The child's exit, observed once.
	exited := make(chan struct{})
	go func() {
		<-stderrDone // Wait closes the pipes; let stderr drain first
		res.ServerErr = p.cmd.Wait()
		close(exited)
	}()

	clientEvents := make(chan event, 16)
	serverEvents := make(chan event, 16)
	go read(jsonrpc.NewReader(p.cfg.ClientIn, p.cfg.MaxFrame), gate.ToClient, clientEvents)
	go read(jsonrpc.NewReader(childOut, p.cfg.MaxFrame), gate.ToServer, serverEvents)

	clientGone := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		w := jsonrpc.NewWriter(p.cfg.ClientOut)
		failed := false
		for {
			f, ok := toClient.pop()
			if !ok {
				return
			}
			if failed {
				continue
			}
			if err := w.Write(f); err != nil {
				p.log.Warn("writing to the client failed; the client is gone", "err", err)
				failed = true
				close(clientGone)
			}
		}
	}()
	go func() {
		defer wg.Done()
		w := jsonrpc.NewWriter(childIn)
		failed := false
		for {
			f, ok := toServer.pop()
			if !ok {
				childIn.Close()
				return
			}
			if failed {
				continue
			}
			if err := w.Write(f); err != nil {
				p.log.Warn("writing to the server failed", "err", err)
				failed = true
				childIn.Close()
			}
		}
	}()

	g := p.cfg.Gate
	emit := func(outs []gate.Out) {
		for _, o := range outs {
			if o.To == gate.ToClient {
				toClient.push(o.Frame)
			} else {
				toServer.push(o.Frame)
			}
		}
	}
	over := func(q *queue) bool {
		b, n := q.size()
		return b > softQueueBytes || n > softQueueFrames
	}

	var (
		clientOpen = true // reading from the client
		serverOpen = true // reading from the server
		stopping   bool   // the child is being stopped
		timer      *time.Timer
		stopTimer  <-chan time.Time
		stopStage  int
	)
	stop := func() {
		if stopping {
			return
		}
		stopping = true
		toServer.close() // the writer closes the child's stdin once drained
		stopTimer = time.After(p.cfg.StopGrace)
	}
	for clientOpen || serverOpen {
		if g.Status().Closed && !stopping {
			// Blocked, held or unverified: nothing more will reach the
			// server, so it has no reason to keep running.
			stop()
		}
		var cin, sin <-chan event
		if clientOpen && !over(toServer) {
			cin = clientEvents
		}
		if serverOpen && !over(toClient) {
			sin = serverEvents
		}
		var tick <-chan time.Time
		if d := g.Deadline(); !d.IsZero() {
			if timer != nil {
				timer.Stop()
			}
			timer = time.NewTimer(time.Until(d))
			tick = timer.C
		}
		select {
		case ev := <-cin:
			switch {
			case ev.err == nil:
				emit(g.FromClient(ev.frame))
			case errors.Is(ev.err, jsonrpc.ErrFrameTooLarge):
				p.log.Warn("client message over the frame limit dropped", "limit", p.cfg.MaxFrame)
				emit(g.FrameTooLarge(gate.ToClient, p.cfg.MaxFrame))
			default:
				if !errors.Is(ev.err, io.EOF) {
					p.log.Warn("reading from the client failed", "err", ev.err)
				}
				clientOpen = false
				stop()
			}
		case ev := <-sin:
			switch {
			case ev.err == nil:
				emit(g.FromServer(ev.frame))
			case errors.Is(ev.err, jsonrpc.ErrFrameTooLarge):
				p.log.Warn("server message over the frame limit dropped", "limit", p.cfg.MaxFrame)
				emit(g.FrameTooLarge(gate.ToServer, p.cfg.MaxFrame))
			default:
				serverOpen = false
				if clientOpen && !stopping {
					res.ServerExited = true
					p.log.Warn("the server closed its output before the client was done")
				}
				emit(g.ServerClosed())
				// Nothing more can be answered: stop reading the client
				// once every error is written.
				clientOpen = false
				stop()
			}
		case <-tick:
			emit(g.Tick())
		case <-clientGone:
			clientGone = nil
			clientOpen = false
			stop()
		case <-stopTimer:
			stopStage++
			switch stopStage {
			case 1:
				p.log.Info("server still running after its stdin closed: sending SIGTERM")
				terminate(p.cmd)
				stopTimer = time.After(p.cfg.StopGrace)
			default:
				p.log.Warn("server still running after SIGTERM: sending SIGKILL")
				kill(p.cmd)
				stopTimer = nil
			}
		case <-kick:
		case <-ctx.Done():
			clientOpen = false
			stop()
		}
	}
	if timer != nil {
		timer.Stop()
	}
	// Wait for the child, escalating as above.
	for waiting := true; waiting; {
		select {
		case <-exited:
			waiting = false
		case <-stopTimer:
			stopStage++
			if stopStage == 1 {
				terminate(p.cmd)
				stopTimer = time.After(p.cfg.StopGrace)
			} else {
				kill(p.cmd)
				stopTimer = nil
			}
		}
	}
	// The process group may hold children that outlived the server.
	kill(p.cmd)
	toClient.close()
	toServer.close()
	wg.Wait()
	res.Gate = g.Status()
	return res
}

func read(r *jsonrpc.Reader, from gate.Side, ch chan<- event) {
	for {
		f, err := r.Next()
		if err != nil && !errors.Is(err, jsonrpc.ErrFrameTooLarge) {
			if f != nil {
				ch <- event{from: from, frame: f}
			}
			ch <- event{from: from, err: err}
			return
		}
		ch <- event{from: from, frame: f, err: err}
	}
}

// passStderr copies the child's stderr through, up to MaxStderr bytes.
func (p *proxy) passStderr(r io.Reader) {
	w := p.cfg.Stderr
	if w == nil {
		w = os.Stderr
	}
	n, _ := io.Copy(w, io.LimitReader(r, p.cfg.MaxStderr))
	if n == p.cfg.MaxStderr {
		p.log.Warn("server stderr over the limit: the rest is discarded", "limit", p.cfg.MaxStderr)
		_, _ = io.Copy(io.Discard, r)
	}
}
