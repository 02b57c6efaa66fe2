package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// maxTracked bounds the requests one session measures at once: the gate's
// own bound on requests in flight (gate.DefaultLimits.MaxPending).
const maxTracked = 4096

// Attribute keys, from the OpenTelemetry semantic conventions for MCP and
// GenAI tool calls, and mcpseal's own.
const (
	attrMethod    = "mcp.method.name"
	attrSession   = "mcp.session.id"
	attrProtocol  = "mcp.protocol.version"
	attrTool      = "gen_ai.tool.name"
	attrOperation = "gen_ai.operation.name"
	attrStatus    = "rpc.response.status_code"
	attrErrorType = "error.type"
	attrOutcome   = "mcpseal.outcome"
	attrCode      = "mcpseal.refusal.code"
	attrServer    = "mcpseal.server.id"
	attrLabel     = "mcpseal.server.label"
	attrCount     = "mcpseal.count"
)

// Session observes one gate session. Its methods run under the
// transport's lock (gate.Observer, gate.Hooks); Close may come from
// elsewhere, so a mutex guards the state.
type Session struct {
	t      *Telemetry
	id     string
	server string
	label  string

	mu      sync.Mutex
	ctx     context.Context   // the session span's
	sc      trace.SpanContext // the session span's, read once
	span    trace.Span
	pending map[string]*request
	// dups are the client requests taken under an id already pending,
	// in order, until the next Emitted (kept across Took: a batch's
	// elements and a replayed queue are several in one step). Each is one
	// of three: a repeat, which the gate refuses (id-collision: the
	// refusal is not the first one's answer); the gate's replay of the
	// pending request it queued during the contract check (the same
	// request: its answer is the pending one's); or, in a batch, a new
	// request under the id of one the gate answered earlier in the step,
	// which the gate forwards or answers after that answer. Emitted tells
	// them apart by what it carries (dup).
	dups     []*request
	epoch    uint64 // steps apart: counted at each server message taken and each Emitted
	verify   trace.Span
	verifyAt time.Time
	verified bool
	protocol string
	closed   bool
	hdr      headerContext           // the next client message's HTTP trace headers
	shapes   map[shapeKey]*spanShape // see shape
	free     []*request              // ended requests, for reuse (see release)
}

// maxFree bounds the ended requests a session keeps for reuse: a client
// has a few requests in flight at a time, so a few are enough to make
// the common call allocate none.
const maxFree = 16

// A request span's shape: its name and attributes, the same for every
// request of one method and tool, built once per session rather than on
// every call (issue 16: the options and their attribute slices were a
// good part of what a traced call allocates). At most maxShapes are kept;
// a session that calls more distinct tools builds the rest per call.
//
// The attributes are set when the span ends, with its outcome, in one
// SetAttributes: not as a start option, which the SDK copies into its
// start config and then into the span, whose slice the outcome grows
// again. No sampler sees the difference: OTEL_TRACES_SAMPLER selects only
// the SDK's own samplers (trace.go), which decide on the trace id and the
// parent alone, and mcpseal's span processor reads ended spans only.
type shapeKey struct{ method, tool string }

type spanShape struct {
	name  string
	attrs []attribute.KeyValue // method, session, tool, operation, protocol
	ok    []attribute.KeyValue // attrs and the outcome ok
	okEnc encodedAttrs         // ok, encoded under the provider's limits
	upEnc encodedAttrs         // the upstream span's attribute (the method), encoded
}

const maxShapes = 256

// The outcome of most requests, built once.
var okOutcome = []attribute.KeyValue{attribute.String(attrOutcome, "ok")}

// shape returns the span shape of a request of method (and, for a call of
// a tool of the verified contract, the tool's safe name), built at most
// once per session.
func (s *Session) shape(method, tool string) *spanShape {
	k := shapeKey{method, tool}
	if sh := s.shapes[k]; sh != nil {
		return sh
	}
	name := method
	attrs := []attribute.KeyValue{attribute.String(attrMethod, method), attribute.String(attrSession, s.id)}
	if tool != "" {
		name += " " + tool
		attrs = append(attrs, attribute.String(attrTool, tool), attribute.String(attrOperation, "execute_tool"))
	}
	if s.protocol != "" {
		attrs = append(attrs, attribute.String(attrProtocol, s.protocol))
	}
	sh := &spanShape{name: name, attrs: attrs[:len(attrs):len(attrs)], ok: append(attrs, okOutcome...)}
	if b := s.t.spans; b != nil {
		sh.okEnc = encodeAttrs(sh.ok, b.limits)
		sh.upEnc = encodeAttrs([]attribute.KeyValue{attribute.String(attrMethod, method)}, b.limits)
	}
	if len(s.shapes) < maxShapes {
		if s.shapes == nil {
			s.shapes = make(map[shapeKey]*spanShape)
		}
		s.shapes[k] = sh
	}
	return sh
}

type request struct {
	key        string // its key in pending
	method     string // a methods label
	start      time.Time
	upstream   time.Time  // when it was forwarded; zero before
	fromServer bool       // the server answered it
	serverErr  bool       // with an error (else mcpseal's error replaced a result)
	span       reqSpan    // traced requests only (reqspan.go)
	shape      *spanShape // the span's name and attributes
	decided    bool       // shape is the tool's (decide)
	epoch      uint64     // the session's when it was taken
	replay     bool       // in dups: taken again in a later step, the gate's replay of the pending one
	confirm    trace.Span
}

// Session starts observing one gate session of the server id (its label
// is a safe name). A nil Telemetry returns nil.
func (t *Telemetry) Session(id, label string) *Session {
	if t == nil {
		return nil
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	s := &Session{t: t, id: hex.EncodeToString(b[:]), server: id, label: label, pending: make(map[string]*request), ctx: context.Background()}
	t.m.sessions.Inc()
	t.mu.Lock()
	t.open[s] = struct{}{}
	t.mu.Unlock()
	if t.tracer != nil {
		s.ctx, s.span = t.tracer.Start(context.Background(), "mcpseal.session", trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(attribute.String(attrSession, s.id), attribute.String(attrServer, reduce(id)), attribute.String(attrLabel, reduce(label))))
		s.sc = s.span.SpanContext()
	}
	return s
}

// Hooks returns h with the session's observer and event meter added; a
// nil Session returns h unchanged.
func (s *Session) Hooks(h gate.Hooks) gate.Hooks {
	if s == nil {
		return h
	}
	h.Observer = s
	inner := h.Event
	h.Event = func(e gate.Event) {
		s.event(e)
		if inner != nil {
			inner(e)
		}
	}
	if call := h.Call; s.t.tracer != nil {
		h.Call = func(ci gate.CallInfo) gate.Verdict {
			var v gate.Verdict
			if call != nil {
				v = call(ci)
			} else {
				v = gate.Verdict{Kind: gate.Allow}
			}
			return s.decide(ci, v)
		}
	}
	return h
}

// Took implements gate.Observer.
func (s *Session) Took(from gate.Side, m jsonrpc.Message) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if from == gate.ToServer {
		s.epoch++ // a step of the server's: no batch of the client's spans it
		if m.Kind == jsonrpc.Response {
			var kb [64]byte
			r := s.pending[string(jsonrpc.AppendIDKey(kb[:0], m.ID))]
			if r == nil || r.upstream.IsZero() || r.fromServer {
				return
			}
			r.fromServer, r.serverErr = true, m.Error != nil
			s.t.m.upstream.Observe(now.Sub(r.upstream).Seconds(), r.method)
			if r.span.up.id.IsValid() {
				r.span.up.end, r.span.up.err = now, m.Error != nil
			}
			if r.method == "initialize" && s.t.tracer != nil && m.Result != nil {
				if v := paramString(m.Result, "protocolVersion"); isProtocolVersion(v) {
					s.protocol = v
					clear(s.shapes) // their attributes name the protocol
				}
			}
			if !s.verified && s.verify == nil && (r.method == "initialize" || r.method == "server/discover") {
				s.startVerify(r, now)
			}
		}
		return
	}
	hdr := s.hdr
	s.hdr = headerContext{}
	if m.Kind != jsonrpc.Request {
		return
	}
	key := jsonrpc.IDKey(m.ID)
	_, dup := s.pending[key]
	if dup && len(s.dups) >= maxTracked {
		return
	}
	if !dup && len(s.pending) >= maxTracked {
		s.t.m.untracked.Inc()
		return
	}
	r := s.newRequest()
	r.key, r.method, r.start, r.epoch = key, methodLabel(m.Method), now, s.epoch
	if dup {
		r.replay = s.pending[key].epoch != s.epoch
		s.dups = append(s.dups, r)
	} else {
		s.pending[key] = r
	}
	if !dup && !s.verified && s.verify == nil && r.method != "initialize" && r.method != "server/discover" && s.verifyAt.IsZero() {
		s.verifyAt = now // a modern session verifies on its first request
	}
	if s.t.tracer == nil {
		return // metrics need neither the tool's name (the gate's events carry it) nor _meta
	}
	// A call's span is named after its tool once the gate has found the
	// tool in the verified contract (decide): until then, and for a name
	// the client made up, it is the method's.
	sh := s.shape(r.method, "")
	r.shape = sh
	meta := metaOf(m.Params)
	parent, psc, link := s.ctx, s.sc, trace.SpanContext{}
	if tp, ts, ok := s.clientContext(meta, hdr); ok {
		psc = trace.NewSpanContext(withState(tp, ts))
		parent = trace.ContextWithRemoteSpanContext(context.Background(), psc)
		psc = trace.SpanContextFromContext(parent) // remote, as the context holds it
		link = s.sc
	}
	r.span = s.t.startRequestSpanUnder(parent, psc, sh.name, link, now)
}

// newRequest returns a zero request, one released before if there is one.
func (s *Session) newRequest() *request {
	if n := len(s.free); n > 0 {
		r := s.free[n-1]
		s.free[n-1] = nil
		s.free = s.free[:n-1]
		return r
	}
	return new(request)
}

// release takes back an ended request, no longer in pending: nothing
// refers to it any more (its span, if it had one, was encoded when it
// ended: spanBatcher.endRequest), so it is cleared and kept for the next.
func (s *Session) release(r *request) {
	if len(s.free) < maxFree {
		*r = request{}
		s.free = append(s.free, r)
	}
}

func withState(c trace.SpanContextConfig, ts trace.TraceState) trace.SpanContextConfig {
	c.TraceState = ts
	return c
}

// metaOf returns params._meta, nil when params has none, or when it
// cannot name a trace context: params that hold neither "trace" in any
// case nor an escape cannot (metaContext reads such a _meta as no
// context), and are not read at all. Params whose _meta cannot be told
// (named twice, or beside a name a lenient decoder reads as it: "_META",
// "meta") give ambiguousMeta.
func metaOf(params []byte) []byte {
	if len(params) == 0 || params[0] != '{' || !mayNameTrace(params) {
		return nil
	}
	var v [1][]byte
	if jsonrpc.LookupUnaliased(params, []string{"_meta"}, v[:]) != nil {
		return ambiguousMeta
	}
	return v[0]
}

// ambiguousMeta stands for a _meta that cannot be told: not an object
// and naming "trace", metaContext reads it as a trace context present
// and unreadable, as it reads a _meta with a name twice.
var ambiguousMeta = []byte("ambiguous trace context")

// member returns the raw value of an object's member, nil when absent or
// when obj is not one unambiguous object.
func member(obj []byte, key string) []byte {
	if len(obj) == 0 || obj[0] != '{' {
		return nil
	}
	var v [1][]byte
	if jsonrpc.Lookup(obj, []string{key}, v[:]) != nil {
		return nil
	}
	return v[0]
}

func paramString(params []byte, key string) string {
	raw := member(params, key)
	if raw == nil {
		return ""
	}
	v, err := jsonrpc.DecodeString(raw)
	if err != nil {
		return ""
	}
	return v
}

// Emitted implements gate.Observer.
func (s *Session) Emitted(out []gate.Out) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	for _, o := range out {
		m, ok := o.Envelope()
		if !ok || m.ID == nil {
			continue
		}
		switch {
		case o.To == gate.ToServer && m.Kind == jsonrpc.Request:
			r := s.answered(m.Key)
			if r == nil || !r.upstream.IsZero() {
				continue
			}
			r.upstream = now
			s.t.m.gateLatency.Observe(now.Sub(r.start).Seconds(), r.method)
			// Its id now, so that the transport can name it upstream
			// (UpstreamSpanContext); the exporter writes it with its
			// parent (upstream.go).
			if r.span.sc.IsSampled() {
				r.span.up = upstreamSpan{id: newSpanID(), method: r.method, start: now, enc: r.shape.upEnc}
			}
		case o.To == gate.ToClient && m.Kind == jsonrpc.Response:
			if i := s.lastDup(m.Key); i >= 0 && idCollision(m.Error) {
				s.release(s.dups[i]) // the refusal of a repeat
				s.dups = slices.Delete(s.dups, i, i+1)
				continue
			}
			r := s.answered(m.Key)
			if r == nil {
				continue
			}
			delete(s.pending, m.Key)
			s.finish(r, m.Error, now)
			s.release(r)
		}
	}
	for _, d := range s.dups {
		// Never forwarded nor answered: a repeat refused, or the gate's
		// replay of the pending request, which the Call hook may have
		// decided under its tool (decide).
		if r := s.pending[d.key]; r != nil && d.decided && r.method == d.method {
			r.shape, r.decided = d.shape, true
		}
		s.release(d)
	}
	clear(s.dups)
	s.dups = s.dups[:0]
	s.epoch++
}

// answered returns the request under key that the gate forwards or
// answers now: the pending one, else (the pending one answered earlier in
// this step) the first request taken under key after it, which becomes
// the pending one.
func (s *Session) answered(key string) *request {
	if r := s.pending[key]; r != nil {
		return r
	}
	for i, d := range s.dups {
		if d.key == key {
			s.dups = slices.Delete(s.dups, i, i+1)
			s.pending[key] = d
			return d
		}
	}
	return nil
}

// lastDup is the index in dups of the last request taken under key, -1
// if none.
func (s *Session) lastDup(key string) int {
	for i := len(s.dups) - 1; i >= 0; i-- {
		if s.dups[i].key == key {
			return i
		}
	}
	return -1
}

// taken is the request the gate took last under key: the Call hook
// decides the request it has just taken (the pending one itself when
// that was the gate's replay of it).
func (s *Session) taken(key string) *request {
	if i := s.lastDup(key); i >= 0 && !s.dups[i].replay {
		return s.dups[i]
	}
	return s.pending[key]
}

// idCollision reports whether errMember is the gate's refusal of a
// request under an id already in flight (admitRequest's): the only answer
// the gate gives a repeat that is not the first request's.
func idCollision(errMember []byte) bool {
	return errMember != nil && paramString(member(errMember, "data"), "reason") == gate.ReasonIDCollision
}

// Cancelled implements gate.CancelObserver: the gate gave up the request
// (its transport answers the client); it ends as refused for reason.
func (s *Session) Cancelled(key, reason string) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.pending[key]
	if s.closed || r == nil {
		return
	}
	delete(s.pending, key)
	code := s.t.m.codes.value(reason)
	s.t.m.refusals.Inc(code)
	s.end(r, "refused", code, 0, false, now)
	s.release(r)
}

// finish records a request's answer, with its error member (nil for a
// result).
func (s *Session) finish(r *request, errMember []byte, now time.Time) {
	outcome, code, status := "ok", "", 0
	if errMember != nil {
		status = errorCode(errMember)
		if r.serverErr {
			outcome = "error"
		} else {
			// mcpseal's own answer (a refusal before forwarding, a timeout,
			// a withheld result): its data.reason is one of its codes.
			outcome = "refused"
			code = s.t.m.codes.value(paramString(member(errMember, "data"), "reason"))
			s.t.m.refusals.Inc(code)
		}
	}
	s.end(r, outcome, code, status, errMember != nil, now)
}

// end records the end of a request: its meters, and its span with the
// outcome, mcpseal's refusal code and the JSON-RPC error's code (with
// answeredErr, an error answer).
func (s *Session) end(r *request, outcome, code string, status int, answeredErr bool, now time.Time) {
	if r.upstream.IsZero() {
		s.t.m.gateLatency.Observe(now.Sub(r.start).Seconds(), r.method)
	}
	s.t.m.requests.Inc(r.method, outcome)
	s.dropCall(r)
	if !r.span.traced() {
		return
	}
	if outcome == "ok" {
		r.span.enc = r.shape.okEnc
		s.endRequest(r, r.shape.ok, now)
		return
	}
	attrs := append(r.shape.attrs, attribute.String(attrOutcome, outcome))
	if answeredErr {
		attrs = append(attrs, attribute.String(attrStatus, strconv.Itoa(status)), attribute.String(attrErrorType, strconv.Itoa(status)))
		r.span.err = true
	}
	if code != "" {
		attrs = append(attrs, attribute.String(attrCode, code))
		r.span.err = true
	}
	s.endRequest(r, attrs, now)
}

// endRequest ends a request span with attrs, and its upstream span,
// which ends now if the server has not answered.
func (s *Session) endRequest(r *request, attrs []attribute.KeyValue, now time.Time) {
	rs := &r.span
	if rs.up.id.IsValid() && rs.up.end.IsZero() {
		rs.up.end = now
	}
	rs.name, rs.attrs, rs.end = r.shape.name, attrs, now
	s.t.spans.endRequest(rs)
}

// errorCode reads error.code, bounded to an int32; 0 when unreadable.
func errorCode(obj []byte) int {
	raw := member(obj, "code")
	n, err := strconv.ParseInt(string(raw), 10, 32)
	if err != nil {
		return 0
	}
	return int(n)
}

// dropCall ends what of r is still open: a confirmation never answered.
func (s *Session) dropCall(r *request) {
	if r.confirm != nil {
		r.confirm.End()
		r.confirm = nil
	}
}

// decide wraps a Call verdict: a Later verdict's work (a preflight
// provider) gets a span of its own.
func (s *Session) decide(ci gate.CallInfo, v gate.Verdict) gate.Verdict {
	s.mu.Lock()
	name := contract.SafeName(ci.Tool.Name)
	r := s.taken(ci.Request) // the gate names the call's request
	if r != nil && r.method == "tools/call" {
		r.shape, r.decided = s.shape(r.method, name), true // a tool of the verified contract
	}
	traced := r != nil && r.span.traced()
	var ctx context.Context
	if traced {
		ctx = r.span.context() // under the lock: an ended request is reused
	}
	s.mu.Unlock()
	if v.Kind != gate.Later || v.Work == nil || !traced {
		return v
	}
	work, tracer := v.Work, s.t.tracer
	v.Work = func() gate.Verdict {
		_, sp := tracer.Start(ctx, "mcpseal.preflight", trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attribute.String(attrTool, name)))
		out := work()
		sp.SetAttributes(attribute.String(attrOutcome, verdictName(out.Kind)))
		sp.End()
		return out
	}
	return v
}

func verdictName(k gate.VerdictKind) string {
	switch k {
	case gate.Allow:
		return "allow"
	case gate.Refuse:
		return "refuse"
	case gate.Confirm:
		return "confirm"
	}
	return "later"
}

// startVerify opens the contract check's span under the handshake's.
func (s *Session) startVerify(r *request, now time.Time) {
	s.verifyAt = now
	if s.t.tracer == nil {
		return
	}
	ctx := s.ctx
	if r != nil && r.span.traced() {
		ctx = r.span.context()
	}
	_, s.verify = s.t.tracer.Start(ctx, "mcpseal.verify", trace.WithTimestamp(now))
}

// event meters one of the gate's audit events.
func (s *Session) event(e gate.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.t.m
	switch e.Op {
	case "connect":
		s.endVerify(e.Outcome, e.Code)
	case "drift":
		m.drift.Inc(driftLabel(e.Outcome))
		s.endVerify("drift", "drift")
	case "list":
		if e.Outcome == "shown" || e.Outcome == "shaped" {
			m.listing.Observe(float64(e.Count), kindLabel(e.Kind))
		}
	case "withhold":
		if e.Kind == "" {
			m.withheld.Inc("server-requests") // refused, not forwarded to the client
			break
		}
		m.withheld.Inc(kindLabel(e.Kind))
	case "result":
		if e.Outcome == "withheld" {
			m.withheld.Inc("results")
		}
	case "call":
		outcome := "allowed"
		if e.Outcome == "refused" {
			outcome = "refused"
		}
		// Only a tool of the verified contract (its event carries the
		// definition's digest) may become a label value: a name a client
		// made up for a call the gate refused counts as other, so sprayed
		// names cannot take the label's places before the real tools.
		tool := otherLabel
		if e.Digest != "" {
			tool = m.tools.value(e.Name)
		}
		m.toolCalls.Inc(tool, outcome)
	case "confirm":
		switch e.Outcome {
		case "asked":
			m.confirms.Inc("asked")
			if r := s.pending[e.Request]; r != nil && r.span.traced() && r.confirm == nil {
				_, r.confirm = s.t.tracer.Start(r.span.context(), "mcpseal.confirm", trace.WithAttributes(attribute.String(attrTool, e.Name)))
			}
		default:
			outcome := "declined"
			if e.Outcome == "accepted" {
				outcome = "accepted"
			}
			m.confirms.Inc(outcome)
			if r := s.pending[e.Request]; r != nil && r.confirm != nil {
				r.confirm.SetAttributes(attribute.String(attrOutcome, outcome))
				r.confirm.End()
				r.confirm = nil
			}
		}
	}
}

func (s *Session) endVerify(outcome, code string) {
	if s.verified {
		return
	}
	s.verified = true
	if s.verify == nil {
		if s.t.tracer == nil || s.verifyAt.IsZero() {
			return
		}
		_, s.verify = s.t.tracer.Start(s.ctx, "mcpseal.verify", trace.WithTimestamp(s.verifyAt))
	}
	s.verify.SetAttributes(attribute.String(attrOutcome, reduce(outcome)))
	if code != "" {
		s.verify.SetAttributes(attribute.String(attrCode, s.t.m.codes.value(code)))
		s.verify.SetStatus(codes.Error, "")
	}
	s.verify.End()
}

func driftLabel(o string) string {
	if o == "forwarded" {
		return "forwarded"
	}
	return "blocked"
}

func kindLabel(k contract.Kind) string {
	switch k {
	case contract.Tools, contract.Prompts, contract.Resources, contract.ResourceTemplates:
		return string(k)
	case contract.InstructionsKind:
		return "instructions"
	}
	return otherLabel
}

// Close ends the session's spans; requests never answered are counted as
// unanswered.
func (s *Session) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.t.m.sessions.Dec()
	s.t.mu.Lock()
	delete(s.t.open, s)
	s.t.mu.Unlock()
	now := time.Now()
	for k, r := range s.pending {
		s.t.m.requests.Inc(r.method, "unanswered")
		if r.confirm != nil {
			r.confirm.End()
		}
		if r.span.traced() {
			s.endRequest(r, append(r.shape.attrs, attribute.String(attrOutcome, "unanswered")), now)
		}
		delete(s.pending, k)
	}
	if s.verify != nil && !s.verified {
		s.verify.End()
	}
	if s.span != nil {
		s.span.End()
	}
	return nil
}

// isProtocolVersion: an MCP protocol version is a date, YYYY-MM-DD; the
// server's answer is kept only in that shape.
func isProtocolVersion(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i := 0; i < 10; i++ {
		if i != 4 && i != 7 && (v[i] < '0' || v[i] > '9') {
			return false
		}
	}
	return true
}
