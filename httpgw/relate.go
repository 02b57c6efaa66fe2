package httpgw

import (
	"net/http"
	"strconv"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// Keys of params._meta the gateway relates messages by.
const (
	metaProgressToken  = "progressToken"
	metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
	// methodListen opens a 2026-07-28 subscription stream.
	methodListen = "subscriptions/listen"
)

// send hands one client message to the gate. A request registers ex as
// the exchange its answer goes to. In the modern session the request's id
// and progress token are replaced by gateway-unique ones first (clients
// of a stateless server choose ids independently); the answer gets the
// client's exact bytes back.
func (s *session) send(ex *exchange, frame []byte, m jsonrpc.Message) *refusal {
	// What the gate sends the server for this message is written by this
	// goroutine once the lock is released (outbox.hold): after Unlock.
	defer s.in.flush()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastUsed = time.Now()
	if s.in.full() {
		return refuse(http.StatusServiceUnavailable, ReasonBusy, "the server is not reading its input; try again later")
	}
	if m.Kind == jsonrpc.Request {
		key := jsonrpc.IDKey(m.ID)
		if s.modern {
			s.next++
			gid := strconv.AppendQuote(nil, "mcpseal-gw-"+strconv.FormatUint(s.next, 10))
			frame = splice(frame, m.ID, gid)
			key = jsonrpc.IDKey(gid)
			s.restore[key] = append([]byte(nil), m.ID...)
			if m, _ = jsonrpc.Peek(frame); m.Kind != jsonrpc.Request {
				return refuse(http.StatusBadRequest, ReasonInvalid, "invalid JSON-RPC message")
			}
		} else if s.waiting[key] != nil {
			f := refuse(http.StatusOK, gate.ReasonIDCollision, "request id is already in flight; not forwarded")
			f.code, f.id = gate.CodeRefused, m.ID
			return f
		}
		ex.key = key
		s.waiting[key] = ex
		if tok := member(member(m.Params, "_meta"), metaProgressToken); tok != nil {
			if s.modern {
				s.next++
				gtok := strconv.AppendQuote(nil, "mcpseal-gw-p"+strconv.FormatUint(s.next, 10))
				frame = splice(frame, tok, gtok)
				s.untoken[jsonrpc.IDKey(gtok)] = append([]byte(nil), tok...)
				tok = gtok
			}
			k := jsonrpc.IDKey(tok)
			s.tokens[k] = ex
			ex.tokens = append(ex.tokens, k)
		}
		if ex.acceptSSE {
			s.streams = append(s.streams, ex)
			if !s.modern {
				s.next++
				ex.streamID = "s" + strconv.FormatUint(s.next, 10)
			}
		}
	} else if s.modern && m.Method == "notifications/cancelled" {
		var ok bool
		if frame, ok = s.cancelled(frame, m, ex.caller); !ok {
			return nil // a request this gateway cannot tell apart: dropped
		}
	}
	if s.tracer != nil {
		s.tracer.HeaderContext(ex.traceparent, ex.tracestate)
		defer s.tracer.HeaderContext(nil, nil)
	}
	s.inline = true
	ok := s.run(ex, gate.ToClient, frame, func() []gate.Out { return s.g.FromClient(frame) })
	s.inline = false
	if ok {
		s.after()
	}
	return nil
}

// cancelled maps a modern client's notifications/cancelled to the
// gateway id of the one request in flight with that id, among caller's
// own (every caller's when nobody is authenticated).
func (s *session) cancelled(frame []byte, m jsonrpc.Message, caller string) ([]byte, bool) {
	rid := member(m.Params, "requestId")
	var match string
	for k, orig := range s.restore {
		if ex := s.waiting[k]; ex == nil || ex.caller != caller {
			continue
		}
		if jsonrpc.IDKey(orig) == jsonrpc.IDKey(rid) {
			if match != "" {
				return nil, false
			}
			match = k
		}
	}
	if match == "" || rid == nil {
		return nil, false
	}
	return splice(frame, rid, []byte(strconv.Quote(match[2:]))), true
}

// abandon forgets an exchange whose client went away or timed out; a late
// answer is dropped.
func (s *session) abandon(ex *exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ex.key != "" && s.waiting[ex.key] == ex {
		delete(s.waiting, ex.key)
		delete(s.restore, ex.key)
		if s.modern && ex.audited != nil && len(s.orphans) < maxOrphans {
			s.orphans[ex.key] = ex.audited
		}
	}
	if s.get == ex {
		s.get = nil
	}
	if ex.streamID != "" && s.detached[ex.streamID] == ex {
		delete(s.detached, ex.streamID)
	}
	s.release(ex)
	ex.end()
}

// cancel gives up an exchange whose client is told that its call may
// have run (its token expired, the request timeout): the gate cancels
// the request at the server and drops its late answer
// (gate.Session.Cancel), which then names no caller (no orphan is kept);
// the exchange ends as in abandon.
func (s *session) cancel(ex *exchange, reason string) {
	s.mu.Lock()
	if key := ex.key; key != "" && s.waiting[key] == ex {
		if s.run(nil, gate.ToServer, nil, func() []gate.Out { return s.g.Cancel(key, reason) }) {
			s.after()
		}
		delete(s.waiting, key)
		delete(s.restore, key)
	}
	s.mu.Unlock()
	s.abandon(ex)
}

// resumeWindow is how long a legacy stream whose client went away before
// the answer waits for a GET with Last-Event-ID.
const resumeWindow = 2 * time.Minute

// detach keeps a resumable stream whose client went away: its answer and
// the frames before it keep coming to it, for a GET with Last-Event-ID.
func (s *session) detach(ex *exchange) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ex.streamID == "" || s.waiting[ex.key] != ex || len(s.detached) >= maxDetached {
		return false
	}
	s.detached[ex.streamID] = ex
	time.AfterFunc(resumeWindow, func() {
		s.mu.Lock()
		gone := s.detached[ex.streamID] == ex
		s.mu.Unlock()
		if gone {
			s.abandon(ex)
		}
	})
	return true
}

// attach takes a detached stream back for a resuming client.
func (s *session) attach(streamID string) *exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	ex := s.detached[streamID]
	delete(s.detached, streamID)
	return ex
}

// forgetStream drops an answered stream from the detached set.
func (s *session) forgetStream(ex *exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ex.streamID != "" && s.detached[ex.streamID] == ex {
		delete(s.detached, ex.streamID)
	}
}

// target finds the exchange a server request or notification goes to:
// the request its progress token or subscription names, else (legacy) the
// newest open event stream, else the GET stream. In the modern session,
// shared by independent clients, only the first rule applies.
func (s *session) target(m jsonrpc.Message, frame []byte) (*exchange, []byte) {
	if m.Method == "notifications/progress" {
		if tok := member(m.Params, metaProgressToken); tok != nil {
			k := jsonrpc.IDKey(tok)
			if ex := s.tokens[k]; ex != nil && ex.acceptSSE {
				if orig, ok := s.untoken[k]; ok {
					frame = splice(frame, tok, orig)
				}
				return ex, frame
			}
		}
	}
	if sub := member(member(m.Params, "_meta"), metaSubscriptionID); sub != nil {
		k := jsonrpc.IDKey(sub)
		// Only the subscriptions/listen it names: the server sees every
		// request id of the shared session, and must not steer its
		// notifications into another exchange's answer stream.
		if ex := s.waiting[k]; ex != nil && ex.acceptSSE && ex.listen {
			if orig, ok := s.restore[k]; ok {
				frame = splice(frame, sub, orig)
			}
			return ex, frame
		}
	}
	if s.modern {
		return nil, frame
	}
	for i := len(s.streams) - 1; i >= 0; i-- {
		if ex := s.streams[i]; ex.acceptSSE {
			return ex, frame
		}
	}
	return s.get, frame
}

// splice returns frame with sub, a subslice of frame, replaced by with.
func splice(frame, sub, with []byte) []byte {
	start := cap(frame) - cap(sub)
	end := start + len(sub)
	if len(sub) == 0 || start < 0 || end > len(frame) || &frame[start] != &sub[0] {
		panic("httpgw: splice of a slice that is not part of the frame")
	}
	out := make([]byte, 0, len(frame)-len(sub)+len(with))
	out = append(out, frame[:start]...)
	out = append(out, with...)
	return append(out, frame[end:]...)
}

// member returns the raw value of key in a JSON object, or nil.
func member(obj []byte, key string) []byte {
	if len(obj) == 0 {
		return nil
	}
	ms, err := jsonrpc.Members(obj)
	if err != nil {
		return nil
	}
	for _, m := range ms {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

func hasMember(obj []byte, key string) bool { return member(obj, key) != nil }

func stringMember(obj []byte, key string) (string, bool) {
	raw := member(obj, key)
	if raw == nil {
		return "", false
	}
	v, err := jsonrpc.DecodeString(raw)
	return v, err == nil
}
