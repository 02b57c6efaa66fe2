package httpgw

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpseal/mcpseal/egress"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/oauth"
)

// Streamable HTTP header names.
const (
	sessionHeader = "Mcp-Session-Id"
	versionHeader = "Mcp-Protocol-Version"
)

// knownVersions are the protocol versions a client may name in
// MCP-Protocol-Version.
var knownVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", egress.ModernVersion}

// post handles one POST: one JSON-RPC message.
func (gw *Gateway) post(w http.ResponseWriter, r *http.Request, rt *route) {
	frame, m, f := gw.readMessage(w, r)
	if f != nil {
		gw.writeRefusal(w, r, rt.name, f)
		return
	}
	acceptJSON, acceptSSE := accepts(r.Header.Values("Accept"))
	if !acceptJSON && !acceptSSE {
		gw.writeRefusal(w, r, rt.name, refuse(http.StatusNotAcceptable, ReasonAccept, "accept application/json or text/event-stream"))
		return
	}
	if v := r.Header.Get(versionHeader); v != "" && !slices.Contains(knownVersions, v) {
		f := refuse(http.StatusBadRequest, ReasonVersion, "unsupported MCP-Protocol-Version")
		f.id = m.ID
		gw.writeRefusal(w, r, rt.name, f)
		return
	}
	var s *session
	var err error
	sid := r.Header.Get(sessionHeader)
	modern := sid == "" && egress.MetaVersion(m.Params) != ""
	switch {
	case modern:
		// A hidden tool's bindings are not checked: its call must fail as
		// a made-up name's does, whose bindings nobody knows (gate.Config.Hidden).
		bindings := rt.bindings
		if gw.hiddenCall(r, rt, m) {
			bindings = nil
		}
		if egress.CheckHeaders(r.Header, m, bindings) != nil {
			f := &refusal{status: http.StatusBadRequest, code: egress.CodeHeaderMismatch, reason: ReasonHeaderMatch, msg: "mcpseal: the Mcp-* request headers do not match the body", id: m.ID}
			gw.writeRefusal(w, r, rt.name, f)
			return
		}
		s, err = rt.modernSession()
	case sid != "":
		s = gw.find(sid, rt, IdentityFrom(r.Context()))
		if s == nil {
			gw.writeRefusal(w, r, rt.name, refuse(http.StatusNotFound, ReasonSession, "no such session; initialize a new one"))
			return
		}
	case m.Method == "initialize":
		s, err = gw.newLegacy(rt, IdentityFrom(r.Context()))
		if errors.Is(err, errTooManySessions) {
			gw.writeRefusal(w, r, rt.name, refuse(http.StatusServiceUnavailable, ReasonBusy, "too many sessions are open"))
			return
		}
	default:
		gw.writeRefusal(w, r, rt.name, refuse(http.StatusBadRequest, ReasonSession, "missing Mcp-Session-Id: initialize first, or send 2026-07-28 requests with their _meta"))
		return
	}
	if err != nil {
		gw.log.Error("cannot start the route's server", "route", rt.name, "err", err)
		gw.writeRefusal(w, r, rt.name, refuse(http.StatusBadGateway, ReasonBusy, "cannot start the route's server"))
		return
	}
	if gw.cfg.Auth != nil && gw.callerProfile(w, r, rt, m) {
		return
	}
	ex := newExchange(acceptJSON, acceptSSE)
	ex.initialize = m.Method == "initialize" && !modern
	ex.listen = m.Method == methodListen
	ex.clientID = m.ID
	ex.traceparent, ex.tracestate = r.Header.Values("Traceparent"), r.Header.Values("Tracestate")
	if gw.cfg.Auth != nil {
		ex.filter = gw.listingFilter(r, rt, m)
		ex.who = IdentityFrom(r.Context())
		ex.caller = ex.who.Key()
		if ex.who != nil {
			ex.audited = &gate.Caller{Subject: ex.who.Subject, Issuer: ex.who.Issuer, ClientID: ex.who.ClientID, JTIDigest: ex.who.JTIDigest}
		}
	}
	if f := s.send(ex, frame, m); f != nil {
		gw.writeRefusal(w, r, rt.name, f)
		return
	}
	if m.Kind != jsonrpc.Request {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	gw.respond(w, r, s, ex)
}

// readMessage reads the body through the size cap and checks that it is
// one JSON-RPC message.
func (gw *Gateway) readMessage(w http.ResponseWriter, r *http.Request) ([]byte, jsonrpc.Message, *refusal) {
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || ct != "application/json" {
		return nil, jsonrpc.Message{}, refuse(http.StatusUnsupportedMediaType, ReasonContentType, "Content-Type must be application/json")
	}
	if r.ContentLength > int64(gw.lim.MaxBody) {
		return nil, jsonrpc.Message{}, refuse(http.StatusRequestEntityTooLarge, ReasonTooLarge, "the body is over the size limit")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(gw.lim.MaxBody)))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, jsonrpc.Message{}, refuse(http.StatusRequestEntityTooLarge, ReasonTooLarge, "the body is over the size limit")
		}
		return nil, jsonrpc.Message{}, refuse(http.StatusBadRequest, ReasonInvalid, "cannot read the body")
	}
	// JSON cannot hold a raw line break inside a string, so line breaks
	// are whitespace: one message becomes one stdio frame.
	if bytes.ContainsAny(body, "\r\n") {
		body = bytes.Map(func(c rune) rune {
			if c == '\r' || c == '\n' {
				return ' '
			}
			return c
		}, body)
	}
	m, err := jsonrpc.Peek(body)
	switch {
	case err != nil:
		f := refuse(http.StatusBadRequest, ReasonInvalid, "the body is not a valid JSON-RPC message")
		f.code, f.id = -32600, m.ID
		if errors.Is(err, jsonrpc.ErrSyntax) {
			f.code, f.id = -32700, nil
		}
		return nil, m, f
	case m.Kind == jsonrpc.Batch:
		return nil, m, refuse(http.StatusBadRequest, ReasonBatch, "JSON-RPC batches are not supported; send one message per request")
	}
	return body, m, nil
}

// accepts reads Accept: no header, or */*, accepts both.
func accepts(values []string) (jsonOK, sseOK bool) {
	if len(values) == 0 {
		return true, true
	}
	var js, sse acceptance
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(s, 64); err != nil || !(q >= 0 && q <= 1) {
					continue
				}
			}
			js.take(mt, "application/json", q)
			sse.take(mt, "text/event-stream", q)
		}
	}
	return js.ok(), sse.ok()
}

// acceptance is what an Accept header says of one media type: the
// quality of the most specific range that names it (RFC 9110 12.5.1:
// "text/event-stream;q=0" refuses the type even beside "*/*"), the lowest
// of ranges as specific as each other.
type acceptance struct {
	specificity int // 0 no range names it, 1 */*, 2 type/*, 3 the type
	q           float64
}

func (a *acceptance) take(mt, want string, q float64) {
	s := 0
	switch {
	case mt == want:
		s = 3
	case strings.HasSuffix(mt, "/*") && strings.HasPrefix(want, mt[:len(mt)-1]):
		s = 2
	case mt == "*/*":
		s = 1
	}
	switch {
	case s == 0 || s < a.specificity:
	case s > a.specificity:
		a.specificity, a.q = s, q
	default:
		a.q = min(a.q, q)
	}
}

func (a acceptance) ok() bool { return a.specificity > 0 && a.q > 0 }

var errTooManySessions = errors.New("too many sessions")

// newLegacy opens a legacy session on rt.
func (gw *Gateway) newLegacy(rt *route, who *oauth.Identity) (*session, error) {
	gw.mu.Lock()
	if gw.closed || len(gw.sessions) >= gw.lim.MaxSessions || gw.callerSessions(who.Key()) >= maxCallerSessions(gw.lim.MaxSessions, who) {
		gw.mu.Unlock()
		return nil, errTooManySessions
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	gw.sessions[id] = nil // reserve the slot while the server starts
	gw.reserved[id] = who.Key()
	gw.mu.Unlock()
	s, err := newSession(rt, id, false, who, nil)
	gw.mu.Lock()
	delete(gw.reserved, id)
	if err != nil || gw.closed {
		delete(gw.sessions, id)
	} else {
		gw.sessions[id] = s
	}
	gw.mu.Unlock()
	if err == nil && s != nil && gw.isClosed() {
		s.shutdown()
		return nil, errTooManySessions
	}
	return s, err
}

// maxCallerSessions is how many of the legacy sessions one authenticated
// caller may hold: a quarter of them (at least one), so that one caller,
// however low its privileges, cannot take every slot. Without
// authentication there is one user, and no such share.
func maxCallerSessions(limit int, who *oauth.Identity) int {
	if who == nil {
		return limit
	}
	return max(1, limit/4)
}

// callerSessions counts the legacy sessions open or starting for caller
// (under gw.mu).
func (gw *Gateway) callerSessions(caller string) int {
	n := 0
	for id, s := range gw.sessions {
		if s != nil && s.owner == caller || s == nil && gw.reserved[id] == caller {
			n++
		}
	}
	return n
}

func (gw *Gateway) isClosed() bool {
	gw.mu.Lock()
	defer gw.mu.Unlock()
	return gw.closed
}

// lookup finds a legacy session of rt that this replica holds.
func (gw *Gateway) lookup(id string, rt *route) *session {
	id, _, ok := gw.resolve(id, rt)
	if !ok {
		return nil
	}
	gw.mu.Lock()
	defer gw.mu.Unlock()
	s := gw.sessions[id]
	if s == nil || s.rt != rt {
		return nil
	}
	return s
}

// forget removes a legacy session (DELETE, or an initialize that failed).
func (gw *Gateway) forget(s *session) {
	gw.mu.Lock()
	if gw.sessions[s.id] == s {
		delete(gw.sessions, s.id)
	}
	gw.mu.Unlock()
	s.shutdown()
}

// get opens a legacy session's GET stream for server messages.
func (gw *Gateway) get(w http.ResponseWriter, r *http.Request, rt *route) {
	sid := r.Header.Get(sessionHeader)
	if sid == "" {
		gw.writeRefusal(w, r, rt.name, refuse(http.StatusMethodNotAllowed, ReasonMethod, "GET needs an Mcp-Session-Id (2026-07-28 has no GET stream)"))
		return
	}
	if _, sse := accepts(r.Header.Values("Accept")); !sse {
		gw.writeRefusal(w, r, rt.name, refuse(http.StatusNotAcceptable, ReasonAccept, "GET needs Accept: text/event-stream"))
		return
	}
	s := gw.find(sid, rt, IdentityFrom(r.Context()))
	if s == nil {
		gw.writeRefusal(w, r, rt.name, refuse(http.StatusNotFound, ReasonSession, "no such session"))
		return
	}
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		if f := gw.resume(w, r, s, last); f != nil {
			gw.writeRefusal(w, r, rt.name, f)
		}
		return
	}
	ex := newExchange(false, true)
	if f := s.openGET(ex); f != nil {
		gw.writeRefusal(w, r, rt.name, f)
		return
	}
	gw.stream(w, r, s, ex)
}

// delete ends a legacy session.
func (gw *Gateway) delete(w http.ResponseWriter, r *http.Request, rt *route) {
	sid := r.Header.Get(sessionHeader)
	if sid == "" {
		gw.writeRefusal(w, r, rt.name, refuse(http.StatusMethodNotAllowed, ReasonMethod, "DELETE needs an Mcp-Session-Id"))
		return
	}
	s := gw.find(sid, rt, IdentityFrom(r.Context()))
	if s == nil {
		gw.writeRefusal(w, r, rt.name, refuse(http.StatusNotFound, ReasonSession, "no such session"))
		return
	}
	if err := gw.end(s); err != nil {
		gw.log.Error("cannot record the ended session: the session goes on", "route", rt.name, "err", err)
		gw.writeRefusal(w, r, rt.name, refuse(http.StatusServiceUnavailable, ReasonBusy, "cannot end the session now; try again"))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
