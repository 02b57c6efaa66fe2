// Package stdio runs a stdio MCP server as a child process behind the
// session gate: the client speaks newline-delimited JSON-RPC on mcpseal's
// stdin and stdout, the server on the child's.
//
// Frames are read with a size limit and handed to the gate one at a time,
// under one lock; each reader goroutine writes what goes to the other peer
// itself (no hand-off on the hot path), and what goes back to its own peer
// is written by that peer's outlet goroutine. While the frames waiting for
// one peer pass a soft limit, the other peer is not read, so a peer that
// does not read slows its counterpart down instead of growing a buffer, and
// neither direction can deadlock the other. The child's stderr passes through, bounded. When the client
// closes stdin the child's stdin is closed, then the child's process group
// gets SIGTERM and SIGKILL, each after a bounded wait.
package stdio

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/internal/pathclock"
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
)

// Config configures Run.
type Config struct {
	// Server is the server side; nil starts Argv as a child process
	// (StartChild with Env and Dir).
	Server Server
	Argv   []string
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

	// Clock, when set, times each frame's path (MCPSEAL_PATHCLOCK).
	Clock *pathclock.Clock
}

// Result says how the session ended.
type Result struct {
	Gate gate.Status
	// ServerExited is true when the server went away before the client
	// closed its side.
	ServerExited bool
	// ServerErr is the child's exit error, if any.
	ServerErr error
	// Failed is true when a gate step panicked: the session was closed
	// fail-closed and the proxy stopped (see fail.go).
	Failed bool
}

// Run starts the server (cfg.Server, or cfg.Argv as a child process) and
// proxies until the client closes its side or the server exits. It returns
// an error only when the server could not be started.
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
	srv := cfg.Server
	if srv == nil {
		var err error
		if srv, err = StartChild(cfg.Argv, cfg.Env, cfg.Dir); err != nil {
			return Result{}, err
		}
	}
	p := &proxy{cfg: cfg, srv: srv, log: cfg.Logger}
	return p.run(ctx), nil
}

type proxy struct {
	cfg Config
	srv Server
	log *slog.Logger
}

func (p *proxy) run(ctx context.Context) Result {
	var res Result
	childIn, childOut, childErr := p.srv.Stdin(), p.srv.Stdout(), p.srv.Stderr()
	g := p.cfg.Gate
	var mu sync.Mutex // guards g and the fields below
	var (
		// armed is the deadline the run loop's timer is set for (zero:
		// none). A step wakes the loop only when the gate's deadline comes
		// before it: a later one is met by the armed timer firing early
		// and being set again, so the usual call with a timeout (one
		// deadline set on the way out, cleared on the way back) costs no
		// wake-up and no timer at all.
		armed      time.Time
		lastClosed bool
		broken     bool // a step panicked: the gate is not called again
	)
	nullErr := g.InternalError(nil)
	poke := make(chan struct{}, 1) // the gate's deadline or status changed
	failed := make(chan struct{})  // closed when a step panicked
	clientGone := make(chan struct{})
	var goneOnce sync.Once

	toClient := newOutlet(jsonrpc.NewWriter(p.cfg.ClientOut), func(err error) {
		p.log.Warn("writing to the client failed; the client is gone", "err", err)
		goneOnce.Do(func() { close(clientGone) })
	}, nil)
	toServer := newOutlet(jsonrpc.NewWriter(childIn), func(err error) {
		p.log.Warn("writing to the server failed", "err", err)
		childIn.Close()
	}, func() { childIn.Close() })
	var outlets sync.WaitGroup
	outlets.Add(2)
	go func() { defer outlets.Done(); toClient.run() }()
	go func() { defer outlets.Done(); toServer.run() }()

	// handle runs one gate step under the lock and queues what it returns,
	// so that frames leave in the gate's order. frame is what the step
	// handles and from the side it came from (as gate.FrameTooLarge names
	// it), for failing the session should the step panic; a nil step has
	// already failed (its panic was logged).
	handle := func(from gate.Side, frame []byte, step func() []gate.Out) {
		mu.Lock()
		var outs []gate.Out
		stepFailed := step == nil
		switch {
		case broken:
			if from == gate.ToClient && frame != nil {
				outs = answerFailed(g, frame)
			}
		case step != nil:
			outs, stepFailed = p.gateStep(step)
		}
		if stepFailed && !broken {
			broken = true
			outs = p.fail(g, from, frame, nullErr)
			close(failed)
		}
		for _, o := range outs {
			if o.To == gate.ToClient {
				toClient.push(o.Frame)
			} else {
				toServer.push(o.Frame)
			}
		}
		if broken {
			mu.Unlock()
			return
		}
		d, closed := g.Deadline(), g.Status().Closed
		changed := closed != lastClosed || !d.IsZero() && (armed.IsZero() || d.Before(armed))
		lastClosed = closed
		mu.Unlock()
		if changed {
			select {
			case poke <- struct{}{}:
			default:
			}
		}
	}

	// Slow decisions (preflight providers) run on their own goroutine and
	// come back under the lock like any message.
	g.SetDispatch(func(work func() gate.Verdict, resume func(gate.Verdict) []gate.Out) {
		go func() {
			v, ok := p.runWork(work)
			step := func() []gate.Out { return resume(v) }
			if !ok {
				step = nil
			}
			handle(gate.ToServer, nil, step)
			toServer.wake()
			toClient.wake()
		}()
	})

	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		if childErr != nil {
			p.passStderr(childErr)
		}
	}()
	exited := make(chan struct{})
	go func() {
		<-stderrDone // Wait closes the pipes; let stderr drain first
		res.ServerErr = p.srv.Wait()
		close(exited)
	}()

	// Each reader runs the gate itself and writes what goes to the other
	// peer on its own goroutine; what goes back to its own peer is left to
	// that peer's outlet goroutine.
	eofs := make(chan gate.Side, 2)
	clk := p.cfg.Clock
	go func() {
		r := jsonrpc.NewReader(p.cfg.ClientIn, p.cfg.MaxFrame)
		for {
			toServer.waitBelow(softQueueBytes)
			f, err := r.Next()
			var mark pathclock.Mark
			if clk != nil && err == nil {
				mark = pathclock.Now()
			}
			switch {
			case err == nil:
				handle(gate.ToClient, f, func() []gate.Out { return g.FromClient(f) })
				if clk != nil {
					mark = clk.FromClient.Gated(mark)
				}
			case errors.Is(err, jsonrpc.ErrFrameTooLarge):
				p.log.Warn("client message over the frame limit dropped", "limit", p.cfg.MaxFrame)
				handle(gate.ToClient, nil, func() []gate.Out { return g.FrameTooLarge(gate.ToClient, p.cfg.MaxFrame) })
			default:
				if !errors.Is(err, io.EOF) {
					p.log.Warn("reading from the client failed", "err", err)
				}
				eofs <- gate.ToClient
				return
			}
			toServer.drain()
			toClient.wake()
			if clk != nil && err == nil {
				clk.FromClient.Written(mark)
			}
		}
	}()
	go func() {
		r := jsonrpc.NewReader(childOut, p.cfg.MaxFrame)
		for {
			toClient.waitBelow(softQueueBytes)
			f, err := r.Next()
			var mark pathclock.Mark
			if clk != nil && err == nil {
				mark = pathclock.Now()
			}
			switch {
			case err == nil:
				handle(gate.ToServer, f, func() []gate.Out { return g.FromServer(f) })
				if clk != nil {
					mark = clk.FromServer.Gated(mark)
				}
			case errors.Is(err, jsonrpc.ErrFrameTooLarge):
				p.log.Warn("server message over the frame limit dropped", "limit", p.cfg.MaxFrame)
				handle(gate.ToServer, nil, func() []gate.Out { return g.FrameTooLarge(gate.ToServer, p.cfg.MaxFrame) })
			default:
				eofs <- gate.ToServer
				return
			}
			toClient.drain()
			toServer.wake()
			if clk != nil && err == nil {
				clk.FromServer.Written(mark)
			}
		}
	}()

	var (
		clientOpen = true
		serverOpen = true
		stopping   bool
		timer      *time.Timer
		tick       <-chan time.Time
		stopTimer  <-chan time.Time
		stopStage  int
	)
	stop := func() {
		if stopping {
			return
		}
		stopping = true
		toServer.close() // its goroutine closes the child's stdin once drained
		stopTimer = time.After(p.cfg.StopGrace)
	}
	escalate := func() {
		stopStage++
		if stopStage == 1 {
			p.log.Info("server still running after its stdin closed: sending SIGTERM")
			p.srv.Terminate()
			stopTimer = time.After(p.cfg.StopGrace)
			return
		}
		p.log.Warn("server still running after SIGTERM: sending SIGKILL")
		p.srv.Kill()
		stopTimer = nil
	}
	for clientOpen || serverOpen {
		select {
		case side := <-eofs:
			if side == gate.ToClient {
				clientOpen = false
				stop()
				break
			}
			serverOpen = false
			mu.Lock()
			st, gone := g.Status(), broken
			mu.Unlock()
			if gone || st.Closed && st.Code != gate.CodeServerExited {
				// Blocked, held or unverified: the gate stopped the server
				// and answers the client itself until it hangs up, so the
				// client learns why instead of seeing a broken pipe.
				break
			}
			if clientOpen && !stopping {
				res.ServerExited = true
				p.log.Warn("the server closed its output before the client was done")
			}
			handle(gate.ToServer, nil, g.ServerClosed)
			toClient.wake()
			// Nothing more can be answered by the server.
			clientOpen = false
			stop()
		case <-poke:
		case <-tick:
			mu.Lock()
			armed = time.Time{}
			mu.Unlock()
			handle(gate.ToServer, nil, g.Tick)
			toClient.wake()
			toServer.wake()
		case <-clientGone:
			clientGone = nil
			clientOpen = false
			stop()
		case <-failed:
			// A step panicked: the session is closed, the waiting requests
			// are answered; stop the server and end.
			failed = nil
			res.Failed = true
			toClient.wake()
			clientOpen = false
			stop()
		case <-stopTimer:
			escalate()
		case <-ctx.Done():
			clientOpen = false
			stop()
		}
		mu.Lock()
		var d time.Time
		closed := broken
		if !broken {
			d, closed = g.Deadline(), g.Status().Closed
		}
		rearm := !d.IsZero() && (armed.IsZero() || d.Before(armed))
		if rearm {
			armed = d
		}
		mu.Unlock()
		if closed {
			// Blocked, held or unverified: nothing more will reach the
			// server, so it has no reason to keep running.
			stop()
		}
		if rearm {
			if timer == nil {
				timer = time.NewTimer(time.Until(d))
			} else {
				timer.Reset(time.Until(d))
			}
			tick = timer.C
		}
	}
	if timer != nil {
		timer.Stop()
	}
	for waiting := true; waiting; {
		select {
		case <-exited:
			waiting = false
		case <-stopTimer:
			escalate()
		}
	}
	// The process group may hold children that outlived the server.
	p.srv.Kill()
	toClient.close()
	toServer.close()
	flushed := make(chan struct{})
	go func() { outlets.Wait(); close(flushed) }()
	select {
	case <-flushed:
	case <-time.After(p.cfg.StopGrace):
		p.log.Warn("the client is not reading: unsent answers dropped")
	}
	mu.Lock()
	res.Gate = g.Status()
	res.Failed = res.Failed || broken
	mu.Unlock()
	return res
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
