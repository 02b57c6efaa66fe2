package gate

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/policy"
)

const methodElicit = "elicitation/create"

// decideCall applies a call verdict to the tools/call m, whose pending
// entry is p: forward, refuse, ask the person, or decide later.
func (s *Session) decideCall(p *pendingRequest, v Verdict, depth int) {
	key := p.key
	switch v.Kind {
	case Allow:
		s.event(Event{Op: "call", Outcome: "allowed", Kind: contract.Tools, Name: contract.SafeName(p.call.Tool.Name), Digest: p.call.Tool.Digest, Size: len(p.frame), Request: key})
		s.release1(key, p)
		if v.Timeout > 0 {
			s.timeouts[key] = callTimeout{at: s.cfg.Now().Add(v.Timeout), refusal: v.TimeoutRefusal}
		}
	case Refuse:
		s.refuseHeld(key, p, v.Refusal)
	case Confirm:
		if p.continues {
			// The server's next round of a call the person confirmed: the
			// call as they approved it, with the answers to the server.
			params, err := continuation(p.confirmed, p.call.Params)
			if err != nil {
				s.refuseHeld(key, p, Refusal{Code: CodeRefused, Message: "mcpseal: the call's params are not readable unambiguously; not forwarded", Reason: ReasonUnreadable})
				return
			}
			p.call.Params = params
			p.frame = jsonrpc.NewRequest(p.id, methodToolsCall, params)
			if args, present, err := lookup(params, "arguments"); err == nil && present {
				p.call.Arguments = args
			}
			s.event(Event{Op: "call", Outcome: "allowed", Kind: contract.Tools, Name: contract.SafeName(p.call.Tool.Name), Digest: p.call.Tool.Digest, Size: len(p.frame), Request: key})
			s.release1(key, p)
			// Bounded as the confirmed call was: the Confirm verdict
			// carries no call timeout, the person's yes did.
			if t, r := p.confirmed.timeout, p.confirmed.timeoutRefusal; t > 0 {
				s.timeouts[key] = callTimeout{at: s.cfg.Now().Add(t), refusal: r}
			} else if v.Timeout > 0 {
				s.timeouts[key] = callTimeout{at: s.cfg.Now().Add(v.Timeout), refusal: v.TimeoutRefusal}
			}
			return
		}
		if !slices.Contains(p.call.ClientCapabilities, "elicitation") || v.Elicitation == nil {
			r := v.Refusal
			r.Extra = withExtra(r.Extra, "why", "confirmation-unavailable")
			s.refuseHeld(key, p, r)
			return
		}
		if !s.legacy {
			// No server-to-client requests in 2026-07-28: ask in the answer.
			s.askInResult(p, v)
			return
		}
		id := s.newAskID()
		s.asks[jsonrpc.IDKey(id)] = key
		p.refusal = v.Refusal
		p.answer = v.Answer
		s.holds[key] = s.cfg.Now().Add(s.cfg.ConfirmTimeout)
		s.event(Event{Op: "confirm", Outcome: "asked", Kind: contract.Tools, Name: contract.SafeName(p.call.Tool.Name), Digest: p.call.Tool.Digest, Request: key})
		s.toClient(jsonrpc.NewRequest(id, methodElicit, v.Elicitation))
	case Later:
		if s.cfg.Dispatch == nil || v.Work == nil || depth > 2 {
			s.refuseHeld(key, p, Refusal{Code: CodeRefused, Message: "mcpseal: the call's decision could not be made; not forwarded", Reason: "undecided"})
			return
		}
		s.cfg.Dispatch(v.Work, func(v2 Verdict) []Out {
			s.out = nil
			if q, ok := s.pending[key]; ok && q == p && p.held && s.phase != phaseClosed {
				s.decideCall(p, v2, depth+1)
			}
			return s.flush()
		})
	}
}

// release1 forwards a held call.
func (s *Session) release1(key string, p *pendingRequest) {
	delete(s.holds, key)
	p.held = false
	s.toServerAs(p.frame, jsonrpc.Message{Kind: jsonrpc.Request, ID: p.id}, p.key)
}

func (s *Session) refuseHeld(key string, p *pendingRequest, r Refusal) {
	s.forget(key)
	if r.Code == 0 {
		r.Code = CodeRefused
	}
	if r.Message == "" {
		r.Message = "mcpseal: the call was refused by host policy; not forwarded"
	}
	name := contract.SafeName(p.call.Tool.Name)
	// The answer first, then the hook: a panicking hook leaves the answer
	// in the step's output, where Fail finds the id.
	s.toClient(jsonrpc.NewError(p.id, r.Code, r.Message, s.refusalData(r, name)))
	s.event(Event{Op: "call", Outcome: "refused", Code: r.Reason, Kind: contract.Tools, Name: name, Digest: p.call.Tool.Digest, Request: key})
}

func (s *Session) refusalData(r Refusal, tool string) []byte {
	m := map[string]any{}
	for k, v := range r.Extra {
		m[k] = v
	}
	m["reason"] = r.Reason
	m["server"] = ServerRef{ID: s.cfg.Identity.ID, Label: s.cfg.Identity.Label}
	if tool != "" {
		m["tool"] = tool
	}
	b, err := json.Marshal(m)
	if err != nil {
		return marshalData(s.errorData(r.Reason))
	}
	return b
}

func withExtra(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for kk, vv := range m {
		if kk != k {
			out[kk] = vv
		}
	}
	return out
}

// newAskID returns the id of a request of the gate's own to the client:
// 128 random bits, in a space of its own. The server never sees it, and
// cannot guess it to have the client's answer to a request of its own taken
// for the person's answer.
func (s *Session) newAskID() []byte {
	for {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		id := strconv.AppendQuote(nil, askPrefix+hex.EncodeToString(b[:]))
		key := jsonrpc.IDKey(id)
		if _, taken := s.serverReqs[key]; !taken && s.asks[key] == "" {
			return id
		}
	}
}

// askPrefix starts the ids of the gate's requests to the client.
const askPrefix = "mcpseal-ask-"

// confirmAnswer handles the client's answer to a confirmation request.
// The verdict's Answer (by default policy.ConfirmationAnswer: only
// {"action":"accept","content":{"confirm":true}}) decides; an error
// response is an answer that is not a yes.
func (s *Session) confirmAnswer(askKey string, m jsonrpc.Message) {
	key := s.asks[askKey]
	delete(s.asks, askKey)
	p, ok := s.pending[key]
	if !ok || !p.held {
		return
	}
	name := contract.SafeName(p.call.Tool.Name)
	var v Verdict
	if p.answer != nil {
		v = p.answer(m.Result)
	} else if why := policy.ConfirmationAnswer(m.Result); why == "" {
		v = Verdict{Kind: Allow}
	} else {
		v = Verdict{Kind: Refuse, Refusal: p.refusal}
		v.Refusal.Extra = withExtra(v.Refusal.Extra, "why", why)
	}
	if v.Kind == Allow {
		s.event(Event{Op: "confirm", Outcome: "accepted", Kind: contract.Tools, Name: name, Digest: p.call.Tool.Digest, Request: key})
		s.release1(key, p)
		if v.Timeout > 0 {
			s.timeouts[key] = callTimeout{at: s.cfg.Now().Add(v.Timeout), refusal: v.TimeoutRefusal}
		}
		return
	}
	r := v.Refusal
	if r.Code == 0 {
		r = p.refusal
	}
	s.event(Event{Op: "confirm", Outcome: "refused", Code: r.Reason, Kind: contract.Tools, Name: name, Digest: p.call.Tool.Digest, Request: key})
	s.refuseHeld(key, p, r)
}

// expireHolds refuses held calls whose confirmation took too long.
func (s *Session) expireHolds() {
	now := s.cfg.Now()
	for _, key := range sortedKeys(s.holds) {
		if now.Before(s.holds[key]) {
			continue
		}
		p, ok := s.pending[key]
		if !ok {
			s.forget(key) // and its confirmation with it
			continue
		}
		if !p.held {
			delete(s.holds, key)
			continue
		}
		for ak, k := range s.asks {
			if k == key {
				delete(s.asks, ak)
			}
		}
		delete(s.holds, key)
		r := p.refusal
		r.Extra = withExtra(r.Extra, "why", "confirmation-timeout")
		s.refuseHeld(key, p, r)
	}
}

// checkResult applies the result hook to a tools/call result.
func (s *Session) checkResult(p *pendingRequest, m jsonrpc.Message, frame []byte) {
	if reason := notAToolResult(m.Result, !s.legacy); reason != "" {
		// A task handle instead of the result: the result would come by
		// tasks/get or tasks/result (refused) or a notification (dropped),
		// past the Result hook. Withheld under every posture and hooks.
		name := contract.SafeName(p.call.Tool.Name)
		s.log.Warn("tools/call answered with a task, look-alike input requests or an unreadable result: withheld", "server", s.cfg.Identity.ID, "tool", name, "reason", reason)
		s.event(Event{Op: "result", Outcome: "withheld", Code: reason, Kind: contract.Tools, Name: name, Digest: p.call.Tool.Digest, Size: len(m.Result), Request: p.key})
		s.withholdAnswer(p, reason, name)
		return
	}
	if p.confirmed != nil && !s.legacy {
		var v [2][]byte
		if jsonrpc.LookupStrict(m.Result, roundMembers, v[:]) == nil && string(v[0]) == `"input_required"` && v[1] != nil {
			s.noteServerRound(p, v[1])
		}
	}
	if s.cfg.Hooks.Result == nil {
		s.toClientAs(frame, m, p.key)
		return
	}
	s.deliverChecked(p, m, frame, s.cfg.Hooks.Result(*p.call, m.Result), len(m.Result))
}

// roundMembers are what checkResult reads of a confirmed call's answer.
var roundMembers = []string{"resultType", "requestState"}

// checkCallError applies the CallError hook to an error answer to a
// tools/call.
func (s *Session) checkCallError(p *pendingRequest, m jsonrpc.Message, frame []byte) {
	if s.cfg.Hooks.CallError == nil {
		s.toClientAs(frame, m, p.key)
		return
	}
	s.deliverChecked(p, m, frame, s.cfg.Hooks.CallError(*p.call, m.Error), len(m.Error))
}

// deliverChecked delivers the answer to the call p as the hook's verdict
// v says, and records it as a result event of size bytes: as sent, or
// replaced by the refusal.
func (s *Session) deliverChecked(p *pendingRequest, m jsonrpc.Message, frame []byte, v Verdict, size int) {
	name := contract.SafeName(p.call.Tool.Name)
	if v.Kind == Allow {
		s.event(Event{Op: "result", Outcome: "allowed", Kind: contract.Tools, Name: name, Digest: p.call.Tool.Digest, Size: size, Request: p.key})
		s.toClientAs(frame, m, p.key)
		return
	}
	r := v.Refusal
	if r.Code == 0 {
		r.Code = CodeRefused
	}
	s.event(Event{Op: "result", Outcome: "withheld", Code: r.Reason, Kind: contract.Tools, Name: name, Digest: p.call.Tool.Digest, Size: size, Request: p.key})
	s.toClient(jsonrpc.NewError(p.id, r.Code, r.Message, s.refusalData(r, name)))
}

// notAToolResult is the reason the result of a tools/call is not one the
// gate can check or deliver, "" when it is: a task handle (2025-11-25
// {"task": …}; the 2026-07-28 tasks extension's "resultType": "task", or
// any resultType the gate does not know), an object the gate cannot read
// unambiguously, or input requests that could pass for the gate's own
// (inputRequestsLookAlike). In a 2026-07-28 session (modern)
// "input_required" is known: the multi round-trip answer asking the client
// for input, whose retry is a tools/call gated again; it goes on to the
// Result hook as any result does.
func notAToolResult(result []byte, modern bool) string {
	var v [4][]byte
	if err := jsonrpc.LookupStrict(result, taskMembers, v[:]); err != nil {
		return ReasonUnreadable
	}
	task, rt, ir, state := v[0], v[1], v[2], v[3]
	switch {
	case task != nil:
		return ReasonTaskUnsupported
	case rt == nil, string(rt) == `"complete"`, modern && string(rt) == `"input_required"`:
		// inputRequests are read whatever the resultType says: a client
		// may act on them alone.
		return inputRequestsLookAlike(ir, state)
	}
	return ReasonTaskUnsupported
}

// taskMembers are the members notAToolResult reads.
var taskMembers = []string{"task", "resultType", "inputRequests", "requestState"}

// event reports e to the host, attributed to the client request it is
// about: the one the site names, else the one the current step acts for,
// else the one that started the verification round under way.
func (s *Session) event(e Event) {
	if s.cfg.Hooks.Event == nil {
		return
	}
	if e.Request == "" {
		e.Request = s.about
		if e.Request == "" && s.round != nil {
			e.Request = s.round.cause
		}
	}
	if e.Request != "" && s.cfg.CallerOf != nil {
		e.Caller = s.cfg.CallerOf(e.Request)
	}
	s.cfg.Hooks.Event(e)
}

// shapeListing applies the Shape hook to a verified page; it returns the
// frame to deliver (the original when nothing changes).
func (s *Session) shapeListing(p *pendingRequest, m jsonrpc.Message, frame []byte, items [][]byte, page []contract.Definition) []byte {
	if s.cfg.Hooks.Shape == nil {
		return frame
	}
	shapes := s.cfg.Hooks.Shape(p.profile, p.kind, page)
	changed := false
	for _, sh := range shapes {
		if sh.Withhold || sh.Replace != nil {
			changed = true
		}
	}
	if !changed {
		s.event(Event{Op: "list", Outcome: "shown", Kind: p.kind, Count: len(page), Request: jsonrpc.IDKey(p.id)})
		return frame
	}
	arr := []byte{'['}
	shown := 0
	for i, raw := range items {
		var sh Shape
		if i < len(shapes) {
			sh = shapes[i]
		}
		if sh.Withhold {
			s.event(Event{Op: "withhold", Outcome: "withheld", Code: sh.Reason, Kind: p.kind, Name: contract.SafeName(page[i].Name), Digest: page[i].Digest, Request: jsonrpc.IDKey(p.id)})
			continue
		}
		if shown > 0 {
			arr = append(arr, ',')
		}
		if sh.Replace != nil {
			raw = sh.Replace
		}
		arr = append(arr, raw...)
		shown++
	}
	arr = append(arr, ']')
	s.event(Event{Op: "list", Outcome: "shaped", Kind: p.kind, Count: shown, Request: jsonrpc.IDKey(p.id)})
	return jsonrpc.NewResult(m.ID, replaceMember(m.Result, p.kind.ResultMember(), arr))
}

// replaceMember returns obj with the value of key replaced (or, with a nil
// value, the member removed). obj is a valid object (it was peeked).
func replaceMember(obj []byte, key string, value []byte) []byte {
	ms, err := jsonrpc.Members(obj)
	if err != nil {
		return obj
	}
	out := []byte{'{'}
	n := 0
	for _, m := range ms {
		v := m.Value
		if m.Key == key {
			if value == nil {
				continue
			}
			v = value
		}
		if n > 0 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(m.Key)
		out = append(out, k...)
		out = append(out, ':')
		out = append(out, v...)
		n++
	}
	return append(out, '}')
}

// callTimeout is the deadline of a forwarded call.
type callTimeout struct {
	at      time.Time
	refusal Refusal
}

// expireCalls answers calls whose result took too long, tells the server
// to stop, and forgets them so a late result is dropped.
func (s *Session) expireCalls() {
	now := s.cfg.Now()
	for _, key := range sortedKeys(s.timeouts) {
		t := s.timeouts[key]
		if now.Before(t.at) {
			continue
		}
		delete(s.timeouts, key)
		p, ok := s.pending[key]
		if !ok {
			continue
		}
		s.forget(key)
		r := t.refusal
		if r.Code == 0 {
			r.Code = CodeRefused
		}
		if r.Message == "" {
			r.Message = "mcpseal: the call took longer than the host allows; cancelled"
		}
		name := contract.SafeName(p.call.Tool.Name)
		s.toClient(jsonrpc.NewError(p.id, r.Code, r.Message, s.refusalData(r, name)))
		s.event(Event{Op: "call", Outcome: "refused", Code: r.Reason, Kind: contract.Tools, Name: name, Digest: p.call.Tool.Digest, Request: key})
		params := append(append([]byte(`{"requestId":`), p.id...), []byte(`,"reason":"mcpseal: call timeout"}`)...)
		s.toServer(jsonrpc.NewNotification("notifications/cancelled", params))
		s.abandoned.add(key, s.cfg.Limits.MaxPending)
	}
}

// cancelled tells a CancelObserver of a request given up.
func (s *Session) cancelled(request, reason string) {
	if o, ok := s.cfg.Hooks.Observer.(CancelObserver); ok {
		o.Cancelled(request, reason)
	}
}

// Refuse closes the session before anything reached the server (a
// before_connect refusal): every request gets r.
func (s *Session) Refuse(r Refusal) []Out {
	s.out = nil
	s.close(s.refusalClosure(r))
	return s.flush()
}

func (s *Session) refusalClosure(r Refusal) *closure {
	if r.Code == 0 {
		r.Code = CodeRefused
	}
	if r.Message == "" {
		r.Message = "mcpseal: the host refused this server"
	}
	return &closure{code: r.Code, reason: r.Reason, message: r.Message, data: s.refusalData(r, "")}
}

// Cancel gives up the client request whose id key is request, which the
// transport can no longer answer (its caller's access token expired, its
// own request timeout): the transport has told the client the call may
// have run. A request still queued or held for a decision never reaches
// the server; one the server has is cancelled there
// (notifications/cancelled, as for the gate's own call timeout) and
// forgotten, so that its late answer is dropped, never checked, admitted
// or audited as allowed. A tools/call is audited as refused with reason.
// The handshake that opens a session is left to finish.
func (s *Session) Cancel(request, reason string) []Out {
	s.out = nil
	for i, f := range s.queue {
		if m, err := jsonrpc.Peek(f); err == nil && m.Kind == jsonrpc.Request && jsonrpc.IDKey(m.ID) == request {
			s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
			s.queueBytes -= len(f)
			s.cancelled(request, reason)
			if m.Method == methodToolsCall {
				name, _ := paramString(m.Params, "name")
				s.event(Event{Op: "call", Outcome: "refused", Code: reason, Kind: contract.Tools, Name: contract.SafeName(name), Request: request})
			}
			return s.flush()
		}
	}
	p, ok := s.pending[request]
	if !ok || p.handshake {
		return s.flush()
	}
	s.forget(request)
	s.cancelled(request, reason)
	if p.call != nil {
		s.event(Event{Op: "call", Outcome: "refused", Code: reason, Kind: contract.Tools, Name: contract.SafeName(p.call.Tool.Name), Digest: p.call.Tool.Digest, Request: request})
	}
	if !p.held {
		params := append(append([]byte(`{"requestId":`), p.id...), `,"reason":`...)
		params = append(jsonrpc.AppendString(params, "mcpseal: "+reason), '}')
		s.toServer(jsonrpc.NewNotification(methodCancelled, params))
		s.abandoned.add(request, s.cfg.Limits.MaxPending)
	}
	return s.flush()
}
