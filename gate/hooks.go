package gate

import (
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// Hooks are the host's decisions beyond the contract check: which verified
// definitions the client may see (lock approvals, policy allow and deny
// lists, description overrides) and whether each call may happen (policy,
// schema validation, preflight providers, a person's confirmation). All
// hooks are optional; a nil hook allows everything the contract allows.
//
// Hooks run under the transport's lock and must not block: anything slow
// (an external command, an HTTP provider) returns a Later verdict whose
// Work the transport runs on its own goroutine (Config.Dispatch).
type Hooks struct {
	// Shape decides, for each definition of a verified listing page, what
	// the client sees. It is called for every listing delivered to the
	// client. A nil result (or all-zero shapes) delivers the page as sent.
	Shape func(profile string, kind contract.Kind, defs []contract.Definition) []Shape
	// Instructions decides whether verified instructions reach the client;
	// false removes them from the handshake result.
	Instructions func(profile string, instructions *string) bool
	// Call decides a tools/call of a verified tool before it is forwarded.
	Call func(CallInfo) Verdict
	// Result checks a tools/call result before the client sees it.
	Result func(info CallInfo, result []byte) Verdict
	// CallError checks a JSON-RPC error answer to a tools/call (its raw
	// error object) before the client sees it: clients show its message
	// and data to the model, so the host's bound on what a call returns
	// holds for it too. A refusal replaces it with the gate's own error.
	CallError func(info CallInfo, rpcError []byte) Verdict
	// AfterConnect decides, once a profile's contract verified, whether
	// the session may go on (Allow, Refuse or Later; a refusal closes it).
	AfterConnect func(profile string, c *contract.Contract) Verdict
	// Event receives an audit event for every decision the gate makes.
	Event func(Event)
	// Observer, when set, is shown the frames the gate takes and emits,
	// for traces and metrics; it never decides anything.
	Observer Observer
}

// Observer watches a session's traffic after the gate has judged it. It is
// called under the transport's lock, like every hook: it must not block,
// keep the frames, or change them.
type Observer interface {
	// Took is called with each message a peer sent (each element of a
	// server's batch; not a client's batch), peeked, before the gate
	// judges it; from is the peer it came from (ToClient for the client).
	// The message's slices alias the frame.
	Took(from Side, m jsonrpc.Message)
	// Emitted is called with the frames the gate hands the transport, in
	// order, whatever caused them (a frame, a timer, a resumed decision).
	Emitted(out []Out)
}

// A CancelObserver is an Observer that is told of each request the gate
// gives up without answering it (Cancel: its transport answers the
// client), with the request's key and the reason.
type CancelObserver interface {
	Observer
	Cancelled(request, reason string)
}

// Shape is what the client sees of one definition.
type Shape struct {
	// Withhold hides the definition; Reason is a stable code.
	Withhold bool
	Reason   string
	// Replace, when set, is the JSON object delivered instead (the host's
	// model-visible text in place of the server's).
	Replace []byte
}

// CallInfo describes one tools/call.
type CallInfo struct {
	Profile string
	// Tool is the verified definition of the called tool; under a drift,
	// for a pinned tool the server no longer lists, its pinned definition.
	Tool contract.Definition
	// Drifted is true when the session's verified contract is one the
	// monitor posture forwarded although it drifted from its pin. Pinned is
	// then the called tool's pinned definition, nil when the pin has no
	// such tool (it is new, or the profile has no pin). A decision that
	// must not weaken when a server changes its contract (policy's
	// confirm_destructive) reads the riskier of Tool and Pinned.
	Drifted bool
	Pinned  *contract.Definition
	// Params is the raw params object and Arguments its arguments member
	// (nil when absent). Preflight providers must not see them; size
	// limits and schema validation do.
	Params    []byte
	Arguments []byte
	// ClientCapabilities are the capability names the client declared.
	ClientCapabilities []string
	// Request is the call's request key (jsonrpc.IDKey of its id), as
	// events name it; empty where the gate does not track the call.
	Request string
}

// VerdictKind says what to do with a call.
type VerdictKind int

const (
	Allow   VerdictKind = iota // forward it
	Refuse                     // answer with an error; never forwarded
	Confirm                    // ask a person through the client, then forward or refuse
	Later                      // run Work off the lock, then apply its verdict
)

// Verdict is a hook's decision.
type Verdict struct {
	Kind VerdictKind
	// Refusal is the error for Refuse, and for Confirm when the person
	// does not accept or the client cannot ask.
	Refusal Refusal
	// Elicitation is the params object of the elicitation/create request
	// sent to the client for Confirm.
	Elicitation []byte
	// Answer, for Confirm, judges the client's answer: the raw result of
	// its response, nil for an error response. Allow forwards the call;
	// any other verdict refuses it with its Refusal (or, with a zero
	// Refusal, the verdict's own). Without Answer only an explicit yes
	// proceeds (policy.ConfirmationAnswer).
	Answer func(result []byte) Verdict
	// Work computes the verdict for Later; it may block (bounded).
	Work func() Verdict
	// Timeout, for an allowed call, bounds the wait for its result: when
	// it passes the client gets TimeoutRefusal, the server is sent
	// notifications/cancelled and a late result is dropped.
	Timeout        time.Duration
	TimeoutRefusal Refusal
}

// Refusal is an error mcpseal answers a call with. Data must hold only
// mcpseal's own words, codes, digests and safe names.
type Refusal struct {
	Code    int
	Message string
	// Reason is data.reason; Extra is merged into data (stage, why,
	// receipt, pointer ...).
	Reason string
	Extra  map[string]any
}

// Event is one audit event: what the gate decided, never content.
type Event struct {
	Op      string // connect, list, call, confirm, drift, withhold, result
	Outcome string // allowed, refused, blocked, withheld, verified, pinned ...
	Code    string // a stable reason code, when refused
	Kind    contract.Kind
	Name    string // safe name of the definition or tool
	Digest  string
	Count   int // definitions shown, or bytes, as the op says
	Size    int
	// Request is the id key (jsonrpc.IDKey) of the client request the
	// event is about, as the gate saw it; "" for none. Events of a
	// verification round name the request that started it.
	Request string
	// Caller is that request's authenticated caller (Config.CallerOf);
	// nil when unknown or not authenticated.
	Caller *Caller
}

// Caller is an authenticated caller as the transport verified it: the
// audit log records it. Values are the issuer's text; the log reduces
// them to its safe set.
type Caller struct {
	Subject, Issuer, ClientID string
	// JTIDigest is "sha256:" + hex of the token's jti, or "".
	JTIDigest string
}
