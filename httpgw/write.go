package httpgw

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// respond writes the answer to one POSTed request: plain JSON when the
// answer is all there is and the client accepts JSON (one write; the
// spec lets the server choose), else an event stream that ends with the
// answer, flushed as events come. A client that accepts only JSON gets
// JSON (server messages are then never routed to it).
func (gw *Gateway) respond(w http.ResponseWriter, r *http.Request, s *session, ex *exchange) {
	gw.pump(w, r, s, ex, false)
}

// pump writes what comes for ex until its answer. A legacy event stream
// carries event ids; when its client goes away before the answer, the
// exchange waits (resumeWindow) for a GET with Last-Event-ID.
func (gw *Gateway) pump(w http.ResponseWriter, r *http.Request, s *session, ex *exchange, started bool) {
	timeout := time.NewTimer(gw.lim.RequestTimeout)
	defer timeout.Stop()
	expired, stop := gw.tokenExpiry(r)
	defer stop()
	for {
		select {
		case <-ex.wake:
		case <-expired:
			// The caller's access token is no longer valid: nothing more
			// is written to it. The answer says why, so that the client
			// can get a new token; the call is cancelled at the server,
			// but it may have run, and the answer says so.
			gw.giveUp(w, r, s, ex, started, ReasonExpired, expiredError(ex))
			return
		case <-r.Context().Done():
			if !started || !s.detach(ex) {
				s.abandon(ex)
			}
			return
		case <-timeout.C:
			gw.giveUp(w, r, s, ex, started, ReasonTimeout, timeoutError(ex))
			return
		}
		frames, final, result, ended, overflow := ex.take()
		if overflow || ended && !final {
			s.abandon(ex)
			return // the stream breaks; the client sees it end without an answer
		}
		if len(frames) == 0 {
			continue // woken for frames an earlier take already wrote
		}
		if !started && final && len(frames) == 1 && !ex.acceptSSE {
			// A client that takes no event stream: the answer is the whole
			// response, as JSON, in one write.
			s.answered(w, ex, result)
			writeJSON(w, frames[0])
			return
		}
		if !started {
			if final {
				s.answered(w, ex, result)
			} else if ex.initialize {
				w.Header().Set(sessionHeader, s.publicID())
			}
			// The headers go out with the first events (flushed below).
			startStream(w, false)
			started = true
		}
		for i, f := range frames {
			id := ""
			if ex.streamID != "" {
				id = ex.streamID + "-" + strconv.Itoa(ex.record(f))
			}
			// What is taken together is flushed together; a stream that
			// ends is flushed by the end of the response itself.
			writeEvent(w, id, f, !final && i == len(frames)-1)
		}
		if final {
			s.forgetStream(ex)
			return
		}
	}
}

// giveUp ends an exchange before its answer, answering it with f (as
// plain JSON, or as the last event of a stream already started).
//
// The call may have run at the server, or be running: it is cancelled
// there and its late answer dropped (session.cancel), so that nothing of
// it is admitted after the client was told it did not complete.
func (gw *Gateway) giveUp(w http.ResponseWriter, r *http.Request, s *session, ex *exchange, started bool, reason string, f []byte) {
	s.cancel(ex, reason)
	gw.event(Event{Kind: EventRefused, Route: s.rt.name, Reason: reason, Method: r.Method})
	switch {
	case !started && ex.acceptJSON:
		writeJSON(w, f)
		return
	case !started:
		// A client that takes only an event stream gets one, even for
		// one event (Accept: text/event-stream).
		startStream(w, false)
	}
	writeEvent(w, "", f, false) // the response ends here
}

// resume continues a detached stream after the event lastID names:
// what was written after it, then what comes next.
func (gw *Gateway) resume(w http.ResponseWriter, r *http.Request, s *session, lastID string) *refusal {
	sid, seq, ok := strings.Cut(lastID, "-")
	n, err := strconv.Atoi(seq)
	if !ok || err != nil {
		return refuse(http.StatusBadRequest, ReasonSession, "malformed Last-Event-ID")
	}
	ex := s.attach(sid)
	if ex == nil {
		return refuse(http.StatusNotFound, ReasonSession, "no stream to resume with this Last-Event-ID")
	}
	missed, ok := ex.since(n)
	if !ok {
		s.abandon(ex)
		return refuse(http.StatusNotFound, ReasonSession, "the events after this Last-Event-ID are gone")
	}
	startStream(w, true)
	for i, f := range missed {
		writeEvent(w, sid+"-"+strconv.Itoa(n+i+1), f, true)
	}
	gw.pump(w, r, s, ex, true)
	return nil
}

// answered sets the session header on a successful initialize answer,
// and forgets a session whose initialize failed.
func (s *session) answered(w http.ResponseWriter, ex *exchange, result bool) {
	if !ex.initialize {
		return
	}
	if result {
		w.Header().Set(sessionHeader, s.publicID())
		return
	}
	s.rt.gw.forget(s)
}

// tokenExpiry returns a channel that fires when the request's access
// token expires (its exp plus the verifier's leeway, as a new request
// would be judged): one timer per stream, nothing per event. Without
// authentication it never fires.
func (gw *Gateway) tokenExpiry(r *http.Request) (<-chan time.Time, func()) {
	who := IdentityFrom(r.Context())
	if who == nil || gw.cfg.Auth == nil || who.Expiry.IsZero() {
		return nil, func() {}
	}
	t := time.NewTimer(time.Until(who.Expiry.Add(gw.cfg.Auth.Config().Leeway)))
	return t.C, func() { t.Stop() }
}

// expiredError is the answer of a request whose caller's token expired
// while it waited.
func expiredError(ex *exchange) []byte {
	data, _ := json.Marshal(refusalData{Reason: ReasonExpired})
	return jsonrpc.NewError(ex.clientID, CodeForbidden, "mcpseal: the access token expired before the answer; the call was cancelled but may have run: check its effects before you retry with a new token", data)
}

// timeoutError is the answer of a request that waited too long.
func timeoutError(ex *exchange) []byte {
	data, _ := json.Marshal(refusalData{Reason: ReasonTimeout})
	return jsonrpc.NewError(ex.clientID, CodeForbidden, "mcpseal: no answer from the server within the request timeout; the call was cancelled but may have run: check its effects before you retry", data)
}

// writeJSON writes frame as the whole response, application/json, with
// its length (so that a large frame is not chunked).
func writeJSON(w http.ResponseWriter, frame []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(frame)))
	_, _ = w.Write(frame)
}

// startStream starts an event stream, and flushes its headers when flush
// is set.
func startStream(w http.ResponseWriter, flush bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if !flush {
		return
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// writeEvent writes one frame as one event, with id when it is not "",
// and flushes it when flush is set. Frames are single lines (see
// readMessage and package egress).
func writeEvent(w http.ResponseWriter, id string, frame []byte, flush bool) {
	b := make([]byte, 0, len(frame)+len(id)+32)
	if id != "" {
		b = append(b, "id: "...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	b = append(b, "event: message\ndata: "...)
	b = append(b, frame...)
	b = append(b, "\n\n"...)
	_, _ = w.Write(b)
	if !flush {
		return
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// openGET registers ex as the session's GET stream.
func (s *session) openGET(ex *exchange) *refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.get != nil {
		return refuse(http.StatusConflict, ReasonSession, "the session already has a GET stream")
	}
	s.get = ex
	s.lastUsed = time.Now()
	for _, f := range s.backlog {
		ex.push(f)
	}
	s.backlog, s.backlogN = nil, 0
	return nil
}

// stream writes a GET stream until the client or the session ends it.
func (gw *Gateway) stream(w http.ResponseWriter, r *http.Request, s *session, ex *exchange) {
	startStream(w, true)
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	expired, stop := gw.tokenExpiry(r)
	defer stop()
	for {
		select {
		case <-ex.wake:
		case <-expired:
			// The stream ends with the caller's token; a client with a
			// new one opens the next.
			s.abandon(ex)
			gw.event(Event{Kind: EventRefused, Route: s.rt.name, Reason: ReasonExpired, Method: r.Method})
			return
		case <-keepalive.C:
			_, _ = w.Write([]byte(": keepalive\n\n"))
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			continue
		case <-r.Context().Done():
			s.abandon(ex)
			return
		}
		frames, _, _, ended, overflow := ex.take()
		for _, f := range frames {
			writeEvent(w, "", f, true)
		}
		if ended || overflow {
			s.abandon(ex)
			return
		}
	}
}
