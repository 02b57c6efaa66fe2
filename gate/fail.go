package gate

import (
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// CodeInternal: the gate hit an internal error (a bug in mcpseal or in a
// host hook) while handling a message; the session was closed fail-closed
// and nothing more reaches either side. Documented in docs/error-codes.md.
const CodeInternal = -32016

// ReasonInternal is data.reason of CodeInternal.
const ReasonInternal = "internal-error"

// Fail closes the session after one of its steps panicked (FromClient,
// FromServer, Tick, ServerClosed, FrameTooLarge, a Dispatch resume, or a
// hook one of them called). The transport recovers the panic and calls
// Fail with the frame the failed step was handling and the side it came
// from, as FrameTooLarge names it (ToClient: from the client); nil for a
// step that handles no frame.
//
// The session's state may be inconsistent, so Fail trusts none of it:
// every part of its work is guarded on its own, and it answers every
// client request id it can still find — the partial output of the failed
// step (which it discards: nothing from a failed step reaches either
// side), the forwarded and held requests, the held handshake, the queue,
// the client request being handled and the client request a server
// response being handled answers (a response with one of the gate's own
// ids answers nothing) — with CodeInternal, each id at most once. Then the session is closed: later client requests get the same
// error and nothing is forwarded either way. Fail returns only frames for
// the client. If Fail itself panics, the panic propagates: the transport
// then answers what it can by its own means and ends the session.
func (s *Session) Fail(from Side, frame []byte) []Out {
	c := s.internalClosure()
	var out []Out
	answered := make(map[string]bool)
	answer := func(id []byte) {
		k := jsonrpc.IDKey(id)
		if answered[k] {
			return
		}
		answered[k] = true
		out = append(out, Out{To: ToClient, Frame: c.response(id)})
	}
	// waiting answers the id of each message of kind in frame (or in the
	// batch frame is) that a client waits for.
	waiting := func(frame []byte, kind jsonrpc.Kind) {
		one := func(m jsonrpc.Message) {
			if m.Kind == kind && m.ID != nil && (kind == jsonrpc.Request || !s.ownID(m.ID)) {
				answer(m.ID)
			}
		}
		m, err := jsonrpc.Peek(frame)
		if err != nil {
			return
		}
		if m.Kind != jsonrpc.Batch {
			one(m)
			return
		}
		elems, _ := jsonrpc.Elements(frame)
		for _, e := range elems {
			if m, err := jsonrpc.Peek(e); err == nil {
				one(m)
			}
		}
	}
	partial := s.out
	s.out = nil
	s.guard("partial output", func() {
		// Every response the failed step meant for the client answers a
		// client request: that request gets the internal error instead.
		for _, o := range partial {
			if m, err := jsonrpc.Peek(o.Frame); o.To == ToClient && err == nil && m.Kind == jsonrpc.Response && m.ID != nil {
				answer(m.ID)
			}
		}
	})
	s.guard("held handshake", func() {
		if s.round != nil && s.round.handshakeID != nil {
			answer(s.round.handshakeID)
		}
	})
	s.guard("pending requests", func() {
		for _, k := range sortedKeys(s.pending) {
			if p := s.pending[k]; p != nil && p.id != nil {
				answer(p.id)
			}
		}
	})
	s.guard("queued requests", func() {
		for _, f := range s.queue {
			waiting(f, jsonrpc.Request)
		}
		for _, f := range s.replay {
			waiting(f, jsonrpc.Request)
		}
		if s.replaying != nil {
			waiting(s.replaying, jsonrpc.Request)
		}
	})
	s.guard("current frame", func() {
		switch {
		case frame == nil:
		case from == ToClient:
			waiting(frame, jsonrpc.Request)
		default:
			// The step may have taken the request out of pending before
			// it failed: its answer is the only trace left.
			waiting(frame, jsonrpc.Response)
		}
	})
	// Mark the session closed last but unconditionally: plain stores that
	// cannot fail. A closure already in place (drift, held) stays: it is
	// the finding that matters, and it answers later requests as well.
	if s.phase != phaseClosed || s.closure == nil {
		s.closure = c
	}
	s.phase = phaseClosed
	s.round = nil
	s.pending = make(map[string]*pendingRequest)
	s.own = make(map[string]*ownRequest)
	s.asks = make(map[string]string)
	s.holds = make(map[string]time.Time)
	s.timeouts = make(map[string]callTimeout)
	s.abandoned = abandonedIDs{}
	s.queue, s.queueBytes = nil, 0
	s.replay = nil
	s.held, s.heldBytes = nil, 0
	s.serverReqs = make(map[string]struct{})
	return out
}

// ownID reports whether id is one of the gate's own request ids.
func (s *Session) ownID(id []byte) bool {
	p := s.cfg.IDPrefix
	return p != "" && len(id) > len(p)+2 && id[0] == '"' && string(id[1:len(p)+1]) == p && id[len(p)+1] == '-'
}

func (s *Session) internalClosure() *closure {
	return &closure{
		code:    CodeInternal,
		reason:  ReasonInternal,
		message: "mcpseal: internal error; the session was closed and nothing more is forwarded (see mcpseal's log)",
		data:    marshalData(ErrorData{Reason: ReasonInternal, Server: ServerRef{ID: s.cfg.Identity.ID, Label: s.cfg.Identity.Label}}),
	}
}

// InternalError is the CodeInternal answer to id (nil: a null id), for a
// transport that answers a failed session's requests itself. It reads
// only the session's configuration, never its state.
func (s *Session) InternalError(id []byte) []byte {
	return s.internalClosure().response(id)
}

// guard runs one part of Fail; a panic in it is logged and the rest goes on.
func (s *Session) guard(part string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			LogPanic(s.log, "closing a failed session: "+part, r, debug.Stack())
		}
	}()
	f()
}

// LogPanic logs a recovered panic at error level: where it happened, what
// kind of panic it was and the stack — never message content. A runtime
// error's text names only the operation (nil dereference, index out of
// range [3] with length 2); any other panic value may carry content, so
// only its type is logged.
func LogPanic(log *slog.Logger, where string, r any, stack []byte) {
	if log == nil {
		return
	}
	what := fmt.Sprintf("%T", r)
	if re, ok := r.(runtime.Error); ok {
		what = re.Error()
	}
	log.Error("internal error: the session was closed fail-closed", "where", where, "panic", what, "stack", string(stack))
}
