package httpgw

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpseal/mcpseal/egress"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/oauth"
	"github.com/mcpseal/mcpseal/sessionid"
	"github.com/mcpseal/mcpseal/stdio"
)

// Bounds of one session.
const (
	// maxBacklog bounds server messages kept for a GET stream not yet open.
	maxBacklog      = 256
	maxBacklogBytes = 4 << 20
	// softInbox: while more than this waits for the server, new client
	// requests are refused (the server is not reading).
	softInbox = 16 << 20
	// maxStderr bounds a command route's stderr per session.
	maxStderr = 64 << 20
	// maxDetached bounds the streams of one session waiting to be resumed.
	maxDetached = 16
	// maxOrphans bounds the callers remembered for requests whose client
	// went away before the answer (see session.orphans); past it a late
	// answer's events name no caller.
	maxOrphans = 1024
)

// session is one gate.Session with its server: a legacy client session,
// or the route's shared modern session.
type session struct {
	rt    *route
	id    string          // the legacy Mcp-Session-Id; "" for the modern session
	owner string          // the identity key that opened a legacy session (auth.go)
	who   *oauth.Identity // the identity that opened a legacy session; nil for the modern one
	// sealed is the sealed Mcp-Session-Id (sealed.go), nil for a session
	// only this replica knows.
	sealed atomic.Pointer[string]
	// expires is when the sealed id stops opening (zero when not sealed):
	// how long an ended id is remembered (ended.go).
	expires atomic.Int64
	// settled, for a session continued from a sealed id, is closed once
	// the gate verified it or closed (or the server stopped): the request
	// that continued it waits for that (sealed.go).
	settled    chan struct{}
	settleOnce sync.Once
	modern     bool
	srv        stdio.Server
	in         *outbox
	log        *slog.Logger
	exited     chan struct{} // the server has stopped
	// tracer, when the session is traced, takes the W3C trace headers of
	// each client request (and names mcpseal's spans upstream).
	tracer HeaderTracer

	mu       sync.Mutex // guards g and everything below
	g        *gate.Session
	waiting  map[string]*exchange // by request id key, as the gate sees it
	restore  map[string][]byte    // modern: gateway id key -> the client's id
	tokens   map[string]*exchange // progress token key -> its request's exchange
	untoken  map[string][]byte    // modern: gateway token key -> the client's token
	streams  []*exchange          // open POST event streams, oldest first
	get      *exchange            // the GET stream
	detached map[string]*exchange // legacy POST streams whose client went away, by stream id
	// orphans: modern requests whose client went away, by gateway id key,
	// with their caller, until their answer: the gate's events of a late
	// answer still name the caller (callerOf).
	orphans  map[string]*gate.Caller
	backlog  [][]byte
	backlogN int
	next     uint64
	lastUsed time.Time
	version  string // legacy: the negotiated protocol version
	doneAt   time.Time
	done     bool // the gate closed or the server exited
	failed   bool // a gate step panicked: the gate is not called again (fail.go)
	// inline: the step running is a client message's (send), whose
	// handler goroutine writes the frames for the server itself.
	inline   bool
	timer    *time.Timer
	shutOnce sync.Once
}

// newSession starts a session of rt; resume, when set, continues a
// legacy session another replica sealed (sealed.go).
func newSession(rt *route, id string, modern bool, who *oauth.Identity, resume *sessionid.Claims) (*session, error) {
	gd, err := rt.guard(who)
	if err != nil {
		return nil, err
	}
	tracer, _ := gd.Hooks.Observer.(HeaderTracer)
	srv, err := rt.start(gd, resume, tracer)
	if err != nil {
		if gd.Close != nil {
			gd.Close()
		}
		return nil, err
	}
	s := &session{
		rt: rt, id: id, modern: modern, srv: srv, owner: who.Key(), who: who, tracer: tracer,
		log:      rt.gw.log.With("route", rt.name),
		exited:   make(chan struct{}),
		waiting:  make(map[string]*exchange),
		restore:  make(map[string][]byte),
		tokens:   make(map[string]*exchange),
		untoken:  make(map[string][]byte),
		detached: make(map[string]*exchange),
		orphans:  make(map[string]*gate.Caller),
		lastUsed: time.Now(),
	}
	if resume != nil {
		s.settled = make(chan struct{})
		s.expires.Store(resume.Expires)
		if up, ok := srv.(*egress.Upstream); ok {
			up.Keep(true) // a copy: only the client's DELETE ends the session
		}
	}
	s.g = rt.newGate(gd, s)
	// Slow decisions (preflight providers) run off the lock and come back
	// through step like any message.
	s.g.SetDispatch(func(work func() gate.Verdict, resume func(gate.Verdict) []gate.Out) {
		go func() {
			var v gate.Verdict
			if !s.guarded("dispatched decision", func() { v = work() }) {
				s.mu.Lock()
				if !s.failed {
					s.fail(nil, gate.ToServer, nil)
				}
				s.mu.Unlock()
				return
			}
			s.step(nil, gate.ToServer, nil, func() []gate.Out { return resume(v) })
		}()
	})
	if gd.Close != nil {
		go func() { <-s.exited; gd.Close() }()
	}
	s.in = newOutbox(srv.Stdin(), s.log)
	go s.in.run()
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		if e := srv.Stderr(); e != nil {
			n, _ := io.Copy(rt.gw.cfg.Stderr, io.LimitReader(e, maxStderr))
			if n == maxStderr {
				_, _ = io.Copy(io.Discard, e)
			}
		}
	}()
	go func() {
		<-stderrDone
		_ = srv.Wait()
		close(s.exited)
	}()
	go s.readServer()
	if resume != nil {
		s.version = resume.Protocol
		s.step(nil, gate.ToServer, nil, func() []gate.Out { return s.g.Resume(continuation(resume)) })
	}
	return s, nil
}

// readServer feeds the server's frames to the gate.
func (s *session) readServer() {
	maxFrame := s.rt.gw.lim.MaxBody
	r := jsonrpc.NewReader(s.srv.Stdout(), maxFrame)
	for {
		f, err := r.Next()
		switch {
		case err == nil:
			s.step(nil, gate.ToServer, f, func() []gate.Out { return s.g.FromServer(f) })
		case errors.Is(err, jsonrpc.ErrFrameTooLarge):
			s.log.Warn("server message over the frame limit dropped", "limit", maxFrame)
			s.step(nil, gate.ToServer, nil, func() []gate.Out { return s.g.FrameTooLarge(gate.ToServer, maxFrame) })
		default:
			s.serverClosed()
			return
		}
	}
}

// learn records the x-mcp-header bindings of a tools/list page the gate
// delivers to the client: verified against the pin (and shaped by the
// host), never a page the gate held or refused.
func (s *session) learn(m jsonrpc.Message) {
	if m.Result != nil && hasMember(m.Result, "tools") {
		s.rt.bindings.Learn(m.Result)
	}
}

func (s *session) serverClosed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.failed && !s.g.Status().Closed {
		s.run(nil, gate.ToServer, nil, s.g.ServerClosed)
	}
	s.finish()
}

// step runs one gate step under the lock and delivers what it returns
// (see run for from and frame).
func (s *session) step(origin *exchange, from gate.Side, frame []byte, f func() []gate.Out) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run(origin, from, frame, f) {
		s.after()
	}
}

// after checks the gate's state once a step is done: a closed gate stops
// the server; a verification deadline arms the timer.
func (s *session) after() {
	if st := s.g.Status(); st.Closed || st.Verified {
		s.settle()
	}
	if s.modern {
		// The latest discover decides: a server that speaks 2026-07-28
		// again is no longer a downgraded one.
		s.rt.discoverRefused.Store(s.g.DiscoverRefused())
	}
	if s.g.Status().Closed {
		// Blocked, held or unverified: nothing more reaches the server, so
		// it stops; the session stays and answers with the closure error
		// until the client ends it, as `mcpseal run` does.
		s.finish()
		go s.stopServer()
		return
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if d := s.g.Deadline(); !d.IsZero() {
		s.timer = time.AfterFunc(time.Until(d), func() { s.step(nil, gate.ToServer, nil, s.g.Tick) })
	}
}

// finish marks the session done: nothing more will come from the server.
func (s *session) finish() {
	if !s.done {
		s.done, s.doneAt = true, time.Now()
	}
	s.settle()
}

// settle marks a continued session's verification as over (settled).
func (s *session) settle() {
	if s.settled != nil {
		s.settleOnce.Do(func() { close(s.settled) })
	}
}

// over reports whether the session cannot go on here and its client must
// initialize a new one (HTTP 404): a continued session whose carried
// handshake is not the pin (gate.ReasonStale), or one the upstream said
// is over.
func (s *session) over() bool {
	if up, ok := s.srv.(*egress.Upstream); ok && up.Gone() {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.failed && s.g.Status().Reason == gate.ReasonStale
}

// finished reports whether the session is done, and since when.
func (s *session) finished() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.doneAt, s.done
}

// idleSince is how long nobody has used the session; 0 while a request
// or a stream is open.
func (s *session) idleSince(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) > 0 || s.get != nil {
		return 0
	}
	return now.Sub(s.lastUsed)
}

// shutdown ends the session: its GET stream ends and its server stops.
func (s *session) shutdown() {
	s.mu.Lock()
	s.finish()
	if s.get != nil {
		s.get.end()
		s.get = nil
	}
	s.mu.Unlock()
	s.stopServer()
}

// stopServer stops the server as `mcpseal run` does: stdin closed, then
// SIGTERM, then SIGKILL, each after the grace period.
func (s *session) stopServer() {
	s.shutOnce.Do(func() {
		s.in.close()
		go func() {
			grace := s.rt.gw.lim.StopGrace
			if !waitChan(s.exited, grace) {
				s.srv.Terminate()
				if !waitChan(s.exited, grace) {
					s.srv.Kill()
				}
			}
			// The process group may hold children that outlived the server.
			s.srv.Kill()
		}()
	})
}

func (s *session) waitStopped(d time.Duration) { waitChan(s.exited, d) }

func waitChan(c chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c:
		return true
	case <-t.C:
		return false
	}
}

// dispatch delivers the gate's frames: to the server's outbox, or to the
// client exchange each belongs to.
func (s *session) dispatch(outs []gate.Out, origin *exchange) {
	for _, o := range outs {
		if o.To == gate.ToServer {
			if s.inline {
				s.in.hold(o.Frame) // send flushes it
			} else {
				s.in.push(o.Frame)
			}
			continue
		}
		s.toClient(o.Frame, origin)
	}
}

// toClient routes one frame for the client: an answer to the exchange
// that waits for it, a server request or notification to the stream it
// relates to.
func (s *session) toClient(frame []byte, origin *exchange) {
	m, err := jsonrpc.Peek(frame)
	if err != nil {
		return
	}
	if m.Kind == jsonrpc.Response {
		s.learn(m)
		key := jsonrpc.IDKey(m.ID)
		ex := s.waiting[key]
		if ex == nil && key == "null" {
			ex = origin
		}
		if ex == nil {
			delete(s.orphans, key)
			s.log.Debug("answer for a request nobody waits for dropped")
			return
		}
		delete(s.waiting, key)
		if orig, ok := s.restore[key]; ok {
			delete(s.restore, key)
			frame = splice(frame, m.ID, orig)
		}
		if !s.modern && ex.initialize && m.Result != nil {
			if v, ok := stringMember(m.Result, "protocolVersion"); ok {
				s.version = v
			}
			s.seal()
		}
		s.release(ex)
		ex.answer(frame, m.Result != nil)
		return
	}
	ex, frame := s.target(m, frame)
	switch {
	case ex != nil:
		ex.push(frame)
	case s.modern:
		s.log.Debug("server message with no stream to go to dropped", "method", m.Method)
	case len(s.backlog) < maxBacklog && s.backlogN+len(frame) <= maxBacklogBytes:
		s.backlog = append(s.backlog, frame)
		s.backlogN += len(frame)
	default:
		s.log.Warn("server message dropped: no open stream and the backlog is full", "method", m.Method)
	}
}

// release forgets an exchange that got its answer or went away.
func (s *session) release(ex *exchange) {
	for _, t := range ex.tokens {
		if s.tokens[t] == ex {
			delete(s.tokens, t)
			delete(s.untoken, t)
		}
	}
	ex.tokens = nil
	for i, x := range s.streams {
		if x == ex {
			s.streams = append(s.streams[:i], s.streams[i+1:]...)
			break
		}
	}
	s.lastUsed = time.Now()
}
