package gate

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"slices"
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
// until confirm_timeout. Only an explicit yes forwards a call, and it is
// the call that was asked about, as it was sent (its own requestState and
// inputResponses: a server's round of questions under way goes on), with
// the retry's _meta. Any other requestState is the server's, and the call is
// gated as any call (a server may not issue a state in the gate's space:
// its answer is withheld as a look-alike), except that a server's round
// that continues a call the person confirmed is not put to them again.

// confirmInputKey is the inputRequests key of the gate's question.
const confirmInputKey = "mcpseal-confirm"

// statePrefix starts every requestState the gate issues.
const statePrefix = "mcpseal-state-"

// An askedCall is a call a person is being asked about through an
// input_required answer, by the requestState it was given.
type askedCall struct {
	profile, tool, digest string
	caller                Caller // without JTIDigest: a refreshed token is the same caller
	// args is the SHA-256 of the canonical arguments (hasArgs false when
	// the call had none); params are the call's params as sent: what a yes forwards
	// (with the retry's _meta), so the server runs what the person was
	// asked about, byte for byte.
	args    [32]byte
	hasArgs bool
	params  []byte
	request string // the key of the call asked about, for its events
	// round marks a server's round after a confirmed call (noteServerRound),
	// rounds how many came before it since the person's yes.
	round   bool
	rounds  int
	until   time.Time
	refusal Refusal
	answer  func([]byte) Verdict
	timeout time.Duration
	// timeoutRefusal answers the forwarded call past Timeout.
	timeoutRefusal Refusal
}

// Bounds of the questions waiting for a retry, per session: a question
// holds its call's params, and nobody need ever answer it.
const (
	maxAskedPerCaller = 16       // one authenticated caller of the gateway's shared session cannot take every place
	maxAskedBytes     = 16 << 20 // the params held, all questions together
	// maxServerRounds bounds the server's rounds one yes covers, all
	// within confirm_timeout of it.
	maxServerRounds = 8
)

// askInResult answers the held call p with the gate's question v as an
// input_required result (a 2026-07-28 session).
func (s *Session) askInResult(p *pendingRequest, v Verdict) {
	key := p.key
	s.pruneAsked()
	caller := s.callerOf(key)
	var args [32]byte
	var err error
	if p.call.Arguments != nil {
		args, err = argsDigest(p.call.Arguments)
	}
	mine, held := 0, 0
	for _, a := range s.asked {
		held += len(a.params)
		if a.caller == caller {
			mine++
		}
	}
	switch {
	case err != nil:
		s.refuseHeld(key, p, Refusal{Code: CodeRefused, Message: "mcpseal: the call's arguments are not readable unambiguously; not forwarded", Reason: ReasonUnreadable})
		return
	case len(s.asked) >= s.cfg.Limits.MaxPending || s.cfg.CallerOf != nil && mine >= maxAskedPerCaller || held+len(p.call.Params) > maxAskedBytes:
		s.refuseHeld(key, p, Refusal{Code: CodeRefused, Message: "mcpseal: too many confirmations waiting for an answer; not forwarded", Reason: ReasonQueueFull})
		return
	}
	state := statePrefix + randomHex()
	s.asked[state] = &askedCall{
		profile: p.profile, tool: p.call.Tool.Name, digest: p.call.Tool.Digest, caller: caller,
		args: args, hasArgs: p.call.Arguments != nil, params: bytes.Clone(p.call.Params), request: key,
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

// argsDigest is the SHA-256 of the canonical form of a call's arguments.
func argsDigest(args []byte) ([32]byte, error) {
	c, err := canon.Transform(args)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(c), nil
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
	var sum [32]byte
	var err error
	if args != nil {
		sum, err = argsDigest(args)
	}
	if err != nil || a.profile != p.profile || a.tool != def.Name || a.digest != def.Digest || a.caller != s.callerOf(p.key) || a.hasArgs != (args != nil) || a.args != sum {
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
	params, err := mergeParams(a.params, p.call.Params, metaMember)
	if err != nil {
		refuse(Refusal{}, "unreadable")
		return
	}
	p.call.Params, p.call.Arguments = params, nil
	if args, present, err := lookup(params, "arguments"); err == nil && present {
		p.call.Arguments = args
	}
	p.frame = jsonrpc.NewRequest(m.ID, methodToolsCall, params)
	s.event(Event{Op: "confirm", Outcome: "accepted", Kind: contract.Tools, Name: name, Digest: def.Digest, Request: p.key})
	a.until, a.rounds = s.cfg.Now().Add(s.cfg.ConfirmTimeout), 0 // the server's rounds after it: within this
	if verdict.Timeout > 0 {
		// The answer's allow bounds the call, as confirmAnswer's does (the
		// host policy's call timeout comes with it).
		a.timeout, a.timeoutRefusal = verdict.Timeout, verdict.TimeoutRefusal
	}
	p.confirmed = a
	s.release1(p.key, p)
	if a.timeout > 0 {
		s.timeouts[p.key] = callTimeout{at: s.cfg.Now().Add(a.timeout), refusal: a.timeoutRefusal}
	}
}

// confirmInputMember is the member of inputResponses with the person's
// answer.
var confirmInputMember = []string{confirmInputKey}

// mergeParams returns the members of base but those named in fromRetry,
// followed by the members of retry so named (those it has): a call's
// params as the person approved them, with what the retry brings.
func mergeParams(base, retry []byte, fromRetry []string) ([]byte, error) {
	ms, err := jsonrpc.Members(base)
	if err != nil {
		return nil, err
	}
	v := make([][]byte, len(fromRetry))
	if err := jsonrpc.LookupStrict(retry, fromRetry, v); err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(base)+len(retry))
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
		if !slices.Contains(fromRetry, m.Key) {
			add(m.Key, m.Value)
		}
	}
	for i, k := range fromRetry {
		if v[i] != nil {
			add(k, v[i])
		}
	}
	return append(out, '}'), nil
}

// metaMember is what a confirmed retry brings to the call asked about:
// its _meta (its progress token; the profile was checked equal).
var metaMember = []string{"_meta"}

// pruneAsked forgets the questions whose time is up, and reports each as
// a confirmation that was not answered in time.
func (s *Session) pruneAsked() {
	now := s.cfg.Now()
	for _, k := range sortedKeys(s.asked) {
		a := s.asked[k]
		if now.Before(a.until) {
			continue
		}
		delete(s.asked, k)
		if a.round {
			continue // a server's round (noteServerRound): nobody was asked
		}
		code := a.refusal.Reason
		if code == "" {
			code = ReasonConfirmRetry
		}
		s.event(Event{Op: "confirm", Outcome: "refused", Code: code, Kind: contract.Tools, Name: contract.SafeName(a.tool), Digest: a.digest, Request: a.request})
	}
}

// askedDeadline is when the next question runs out, zero for none.
func (s *Session) askedDeadline() time.Time {
	var d time.Time
	for _, a := range s.asked {
		if d.IsZero() || a.until.Before(d) {
			d = a.until
		}
	}
	return d
}

// callerOf is the authenticated caller of the request key (the gateway's
// shared 2026-07-28 session) without its token's jti, the zero Caller
// otherwise.
func (s *Session) callerOf(key string) Caller {
	if s.cfg.CallerOf == nil {
		return Caller{}
	}
	if c := s.cfg.CallerOf(key); c != nil {
		return Caller{Subject: c.Subject, Issuer: c.Issuer, ClientID: c.ClientID}
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

// A server's own round of questions after a confirmed call goes on without
// the person being asked again: the server's requestState in its
// input_required answer to the call is remembered (under roundKey) with
// the call it continues, and the retry that carries it, of that same call,
// counts as confirmed (Confirm verdicts allow it) once.

// roundKey is the key in Session.asked of a server's requestState that
// continues a confirmed call: no requestState the gate issues starts so.
func roundKey(state string) string { return "\x00" + state }

// noteServerRound remembers the server's requestState (raw) in its
// input_required answer to the confirmed call p.
func (s *Session) noteServerRound(p *pendingRequest, state []byte) {
	st, err := jsonrpc.DecodeString(state)
	if err != nil || p.confirmed == nil {
		return
	}
	s.pruneAsked()
	mine, held := 0, 0
	for _, a := range s.asked {
		held += len(a.params)
		if a.caller == p.confirmed.caller {
			mine++
		}
	}
	c := *p.confirmed
	if c.rounds >= maxServerRounds || !s.cfg.Now().Before(c.until) || len(s.asked) >= s.cfg.Limits.MaxPending ||
		s.cfg.CallerOf != nil && mine >= maxAskedPerCaller || held+len(c.params) > maxAskedBytes {
		return // the person is asked again: fail safe
	}
	c.round, c.rounds, c.request = true, c.rounds+1, p.key
	s.asked[roundKey(st)] = &c
}

// continuation is the params a call that continues the confirmed call a
// forwards: a's name, arguments and other members, as the person
// approved them, with the retry's requestState, inputResponses (the
// answers to the server's questions) and _meta.
func continuation(a *askedCall, retry []byte) ([]byte, error) {
	return mergeParams(a.params, retry, continuationMembers)
}

// continuationMembers are what a continuation takes from the retry.
var continuationMembers = []string{"requestState", "inputResponses", "_meta"}

// continuesConfirmed returns the confirmed call that the call p, of def
// with args, continues when it carries the server's requestState of a
// round after that call and is the same call, else nil; the round is used
// up either way.
func (s *Session) continuesConfirmed(p *pendingRequest, def contract.Definition, args []byte, state string) *askedCall {
	k := roundKey(state)
	a := s.asked[k]
	if a == nil {
		return nil
	}
	delete(s.asked, k)
	var sum [32]byte
	var err error
	if args != nil {
		sum, err = argsDigest(args)
	}
	if err == nil && s.cfg.Now().Before(a.until) && a.profile == p.profile && a.tool == def.Name && a.digest == def.Digest &&
		a.caller == s.callerOf(p.key) && a.hasArgs == (args != nil) && a.args == sum {
		return a
	}
	return nil
}
