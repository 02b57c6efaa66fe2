package httpgw

import (
	"runtime/debug"
	"slices"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// A panic in a gate step (a bug in mcpseal or in a host hook) closes only
// its own session. Every place the session drives its gate goes through
// run: a panic there is logged with its stack (never content), gate.Fail
// answers what the gate still knows with gate.CodeInternal, the session
// answers every exchange still waiting with the same error itself, its
// server stops, and every later request to it gets the error without
// reaching the gate again (a GET stream stays open, carrying nothing, as a
// blocked session's does, so that the client keeps asking and learns why). The gateway and its other
// sessions go on; the route's modern session is replaced after its
// cooldown, as a blocked one is.

// run runs one gate step under s.mu and delivers what it returns; frame is
// what the step handles and from the side it came from (as
// gate.FrameTooLarge names it). It reports whether the session is still
// sound.
func (s *session) run(origin *exchange, from gate.Side, frame []byte, f func() []gate.Out) bool {
	if s.failed {
		if from == gate.ToClient && frame != nil {
			s.answerFailed(origin, frame)
		}
		return false
	}
	if s.guarded("gate step", func() {
		outs := f()
		if s.modern {
			// Before the answer leaves: a client whose discover was
			// refused falls back to initialize at once, on a new legacy
			// session, which must already know (route.discoverRefused).
			s.rt.discoverRefused.Store(s.g.DiscoverRefused())
		}
		s.dispatch(outs, origin)
	}) {
		return true
	}
	s.fail(origin, from, frame)
	return false
}

// guarded runs f; false means it panicked (logged).
func (s *session) guarded(where string, f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			gate.LogPanic(s.log, where, r, debug.Stack())
			ok = false
		}
	}()
	f()
	return true
}

// fail closes the session after a step panicked. Callers hold s.mu.
func (s *session) fail(origin *exchange, from gate.Side, frame []byte) {
	s.failed = true
	var outs []gate.Out
	if s.guarded("failing the session", func() { outs = s.g.Fail(from, frame) }) {
		s.guarded("answering the failed session's requests", func() {
			for _, o := range outs {
				if o.To == gate.ToClient {
					s.toClient(o.Frame, origin)
				}
			}
		})
	}
	// What the gate lost track of still waits here: answer it directly.
	keys := make([]string, 0, len(s.waiting))
	for k := range s.waiting {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ex := s.waiting[k]
		delete(s.waiting, k)
		delete(s.restore, k)
		s.release(ex)
		ex.answer(s.g.InternalError(ex.clientID), false)
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.finish()
	go s.stopServer()
}

// answerFailed answers a client request sent to a failed session without
// the gate, whose state is not trusted any more.
func (s *session) answerFailed(origin *exchange, frame []byte) {
	m, err := jsonrpc.Peek(frame)
	if err != nil || m.Kind != jsonrpc.Request {
		return
	}
	s.toClient(s.g.InternalError(m.ID), origin)
}
