package gate

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/canon"
	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/policy"
)

// This file is how the gate asks a person in a 2026-07-28 session, whose
// protocol has no server-to-client requests: as the specification's multi
// round-trip requests do. The call that needs a confirmation is answered
//
//	{"resultType": "input_required",
//	 "inputRequests": {"mcpseal-confirm": {"method": "elicitation/create", "params": …}},
//	 "requestState": "mcpseal-state-<32 hex>"}
//
// and never reaches the server. The client asks the person and sends the
// call again with the same name and arguments, the person's answer under
// inputResponses["mcpseal-confirm"] and the gate's requestState. The state
// is 128 random bits the server never sees, good for one retry of that
// call (the same tool, definition, arguments, client profile and caller)
// until confirm_timeout. Only an explicit yes forwards the retry, with the
// gate's requestState and inputResponses replaced by those of the call
// that was asked about: a server's own round of questions under way goes
// on as it was. Any other requestState is the server's, and the call is
// gated as any call (a server may not issue a state in the gate's space:
// its answer is withheld as a look-alike).

// confirmInputKey is the inputRequests key of the gate's question.
const confirmInputKey = "mcpseal-confirm"

// statePrefix starts every requestState the gate issues.
const statePrefix = "mcpseal-state-"

// An askedCall is a call a person is being asked about through an
// input_required answer, by the requestState it was given.
type askedCall struct {
	profile, tool, digest string
	caller                Caller
	args                  []byte // canonical arguments; nil when the call had none
	// requestState and inputResponses of the call asked about (raw; nil
	// when absent): a server's round of questions the retry goes on with.
	state, responses []byte
	until            time.Time
	refusal          Refusal
	answer           func([]byte) Verdict
	timeout          time.Duration
	timeoutRefusal   Refusal
}

// askInResult answers the held call p with the gate's question v as an
// input_required result (a 2026-07-28 session).
func (s *Session) askInResult(p *pendingRequest, v Verdict) {
	key := p.key
	s.pruneAsked()
	var prior [2][]byte
	var args []byte
	err := jsonrpc.LookupStrict(p.call.Params, retryMembers, prior[:])
	if err == nil && p.call.Arguments != nil {
		args, err = canon.Transform(p.call.Arguments)
	}
	switch {
	case err != nil:
		s.refuseHeld(key, p, Refusal{Code: CodeRefused, Message: "mcpseal: the call's params are not readable unambiguously; not forwarded", Reason: ReasonUnreadable})
		return
	case len(s.asked) >= s.cfg.Limits.MaxPending:
		s.refuseHeld(key, p, Refusal{Code: CodeRefused, Message: "mcpseal: too many confirmations waiting for an answer; not forwarded", Reason: ReasonQueueFull})
		return
	}
	state := statePrefix + randomHex()
	s.asked[state] = &askedCall{
		profile: p.profile, tool: p.call.Tool.Name, digest: p.call.Tool.Digest, caller: s.callerOf(key),
		args: args, state: bytes.Clone(prior[0]), responses: bytes.Clone(prior[1]),
		until: s.cfg.Now().Add(s.cfg.ConfirmTimeout), refusal: v.Refusal, answer: v.Answer,
		timeout: v.Timeout, timeoutRefusal: v.TimeoutRefusal,
	}
	res := make([]byte, 0, 160+len(v.Elicitation))
	res = append(res, `{"resultType":"input_required","inputRequests":{"`+confirmInputKey+`":{"method":"`+methodElicit+`","params":`...)
	res = append(res, v.Elicitation...)
	res = append(res, `}},"requestState":"`+state+`"}`...)
	s.forget(key)
	s.toClient(jsonrpc.NewResult(p.id, res))
	s.event(Event{Op: "confirm", Outcome: "asked", Kind: contract.Tools, Name: contract.SafeName(p.call.Tool.Name), Digest: p.call.Tool.Digest, Request: key})
}

// retryMembers are the members of a tools/call's params that carry a
// multi round-trip retry.
var retryMembers = []string{"requestState", "inputResponses"}

// gateState reports whether the tools/call params (already read)
// carry a requestState in the gate's space, and which; err when it
// cannot be read one way only (repeated, a case variant, not a string).
func gateState(params object) (state string, ours bool, err error) {
	state, present, err := params.getString(retryMembers[0], false)
	if err != nil || !present {
		return "", false, err
	}
	return state, strings.HasPrefix(strings.ToLower(state), gateIDSpace), nil
}

// confirmRetry decides the retry m (frame) of a call the gate asked about
// under state: p is its pending entry, def the tool's definition now.
func (s *Session) confirmRetry(m jsonrpc.Message, frame []byte, p *pendingRequest, def contract.Definition, args []byte, state string) {
	p.id, p.frame, p.held = m.ID, frame, true
	s.track(p)
	p.call.Request = p.key
	name := contract.SafeName(def.Name)
	a := s.asked[state]
	delete(s.asked, state) // one retry per question, whatever it says
	refuse := func(r Refusal, why string) {
		if r.Code == 0 {
			r = Refusal{Code: CodeRefused, Message: "mcpseal: the call answers a confirmation the gate did not ask, or asked about another call; not forwarded", Reason: ReasonConfirmRetry}
		}
		r.Extra = withExtra(r.Extra, "why", why)
		s.event(Event{Op: "confirm", Outcome: "refused", Code: r.Reason, Kind: contract.Tools, Name: name, Digest: def.Digest, Request: p.key})
		s.refuseHeld(p.key, p, r)
	}
	if a == nil {
		refuse(Refusal{}, "confirmation-unknown")
		return
	}
	if !s.cfg.Now().Before(a.until) {
		refuse(a.refusal, "confirmation-timeout")
		return
	}
	var canonArgs []byte
	var err error
	if args != nil {
		canonArgs, err = canon.Transform(args)
	}
	if err != nil || a.profile != p.profile || a.tool != def.Name || a.digest != def.Digest || a.caller != s.callerOf(p.key) || !bytes.Equal(a.args, canonArgs) {
		refuse(Refusal{}, "confirmation-mismatch")
		return
	}
	var v [2][]byte
	_ = jsonrpc.LookupStrict(p.call.Params, retryMembers, v[:]) // read by gateState
	var answer []byte
	if v[1] != nil {
		var ans [1][]byte
		if jsonrpc.LookupStrict(v[1], confirmInputMember, ans[:]) == nil {
			answer = ans[0]
		}
	}
	var verdict Verdict
	if a.answer != nil {
		verdict = a.answer(answer)
	} else if why := policy.ConfirmationAnswer(answer); why == "" {
		verdict = Verdict{Kind: Allow}
	} else {
		verdict = Verdict{Kind: Refuse, Refusal: a.refusal}
		verdict.Refusal.Extra = withExtra(verdict.Refusal.Extra, "why", why)
	}
	if verdict.Kind != Allow {
		r := verdict.Refusal
		if r.Code == 0 {
			r = a.refusal
		}
		s.event(Event{Op: "confirm", Outcome: "refused", Code: r.Reason, Kind: contract.Tools, Name: name, Digest: def.Digest, Request: p.key})
		s.refuseHeld(p.key, p, r)
		return
	}
	params, err := replaceRetry(p.call.Params, a.state, a.responses)
	if err != nil {
		refuse(Refusal{}, "unreadable")
		return
	}
	p.call.Params = params
	p.frame = jsonrpc.NewRequest(m.ID, methodToolsCall, params)
	s.event(Event{Op: "confirm", Outcome: "accepted", Kind: contract.Tools, Name: name, Digest: def.Digest, Request: p.key})
	s.release1(p.key, p)
	if a.timeout > 0 {
		s.timeouts[p.key] = callTimeout{at: s.cfg.Now().Add(a.timeout), refusal: a.timeoutRefusal}
	}
}

// confirmInputMember is the member of inputResponses with the person's
// answer.
var confirmInputMember = []string{confirmInputKey}

// replaceRetry returns params with its requestState and inputResponses
// replaced by state and responses (raw; nil: left out).
func replaceRetry(params, state, responses []byte) ([]byte, error) {
	ms, err := jsonrpc.Members(params)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(params)+len(state)+len(responses))
	out = append(out, '{')
	add := func(k string, v []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = jsonrpc.AppendString(out, k)
		out = append(out, ':')
		out = append(out, v...)
	}
	for _, m := range ms {
		if m.Key != retryMembers[0] && m.Key != retryMembers[1] {
			add(m.Key, m.Value)
		}
	}
	if state != nil {
		add(retryMembers[0], state)
	}
	if responses != nil {
		add(retryMembers[1], responses)
	}
	return append(out, '}'), nil
}

// pruneAsked forgets the questions whose time is up.
func (s *Session) pruneAsked() {
	now := s.cfg.Now()
	for k, a := range s.asked {
		if !now.Before(a.until) {
			delete(s.asked, k)
		}
	}
}

// callerOf is the authenticated caller of the request key (the gateway's
// shared 2026-07-28 session), the zero Caller otherwise.
func (s *Session) callerOf(key string) Caller {
	if s.cfg.CallerOf == nil {
		return Caller{}
	}
	if c := s.cfg.CallerOf(key); c != nil {
		return *c
	}
	return Caller{}
}

// randomHex is 128 random bits in hex.
func randomHex() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}
