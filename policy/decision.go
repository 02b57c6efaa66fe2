package policy

// Decision is what a hook's provider decides.
type Decision string

const (
	// Allow: proceed.
	Allow Decision = "allow"
	// Warn: proceed only if the host opted in (allow_warn); else refuse.
	Warn Decision = "warn"
	// RequireConfirmation: proceed only if a person explicitly accepts.
	RequireConfirmation Decision = "require_confirmation"
	// Block: refuse.
	Block Decision = "block"
	// Unsupported: the provider cannot decide this; refuse.
	Unsupported Decision = "unsupported"
)

func (d Decision) valid() bool {
	switch d {
	case Allow, Warn, RequireConfirmation, Block, Unsupported:
		return true
	}
	return false
}

// severity orders decisions when several providers answer: the most
// severe wins.
func (d Decision) severity() int {
	switch d {
	case Allow:
		return 0
	case Warn:
		return 1
	case RequireConfirmation:
		return 2
	}
	return 3
}

// Stage names a hook point.
type Stage string

const (
	// StageBeforeConnect runs before the server is started or any byte is
	// sent to it. Input: server identity, command or URL.
	StageBeforeConnect Stage = "before_connect"
	// StageAfterConnect runs once the contract is listed and verified.
	// Input: the listed definitions' kinds, names and digests.
	StageAfterConnect Stage = "after_connect"
	// StageBeforeToolCall runs before each tools/call. Input: the tool's
	// name, digest and annotations, never its arguments.
	StageBeforeToolCall Stage = "before_tool_call"
)

func (s Stage) valid() bool {
	switch s {
	case StageBeforeConnect, StageAfterConnect, StageBeforeToolCall:
		return true
	}
	return false
}

func allStages() map[Stage]bool {
	return map[Stage]bool{StageBeforeConnect: true, StageAfterConnect: true, StageBeforeToolCall: true}
}

// Kind sorts refusals by the JSON-RPC error the gate answers with (see
// docs/preflight.md for the proposed codes).
type Kind string

const (
	// KindPolicy: the host policy refused a call (denied, not granted,
	// rate limited, arguments too large).
	KindPolicy Kind = "policy"
	// KindSchema: the arguments are not valid for the pinned inputSchema,
	// or cannot be validated unambiguously.
	KindSchema Kind = "schema"
	// KindPreflight: a hook's decision refused the connection, the
	// session or the call.
	KindPreflight Kind = "preflight"
	// KindConfirm: confirmation was required and no person said yes.
	KindConfirm Kind = "confirm"
	// KindWithheld: the server's result was withheld from the client.
	KindWithheld Kind = "withheld"
)

// Stable reason codes. They appear in error data, audit events and the
// documentation, and never change meaning.
const (
	ReasonDenied              = "denied"               // the tool is in a deny list
	ReasonNotGranted          = "not-granted"          // an allow list is set and does not name the tool
	ReasonRateLimited         = "rate-limited"         // calls_per_minute exceeded
	ReasonArgumentsTooLarge   = "arguments-too-large"  // argument_bytes exceeded
	ReasonInvalidArguments    = "invalid-arguments"    // not one unambiguous JSON object
	ReasonInputSchema         = "input-schema"         // the arguments violate the pinned inputSchema
	ReasonSchemaUnusable      = "schema-unusable"      // the pinned schema cannot be compiled offline
	ReasonServerBlocked       = "server-blocked"       // connect: block
	ReasonLocalRefused        = "local-refused"        // local: refuse
	ReasonProviderBlock       = "provider-block"       // a provider decided block
	ReasonProviderUnsupported = "provider-unsupported" // a provider decided unsupported
	ReasonProviderFailed      = "provider-failed"      // no usable answer: error, timeout, exit status, garbage
	ReasonReceiptMalformed    = "receipt-malformed"    // the answer is not a receipt in canonical form
	ReasonReceiptForged       = "receipt-forged"       // the signature does not verify with the pinned key
	ReasonReceiptUnknownKey   = "receipt-unknown-key"  // the receipt names a key that is not pinned
	ReasonReceiptExpired      = "receipt-expired"      // expired, or issued in the future
	ReasonReceiptMismatch     = "receipt-mismatch"     // for another stage, subject or request
	ReasonWarnNotAllowed      = "warn-not-allowed"     // warn without allow_warn
	ReasonConfirmDeclined     = "confirm-declined"     // the person declined
	ReasonConfirmCancelled    = "confirm-cancelled"    // the person dismissed the question
	ReasonConfirmTimeout      = "confirm-timeout"      // no answer within confirm_timeout
	ReasonConfirmUnavailable  = "confirm-unavailable"  // the client cannot ask (no elicitation capability)
	ReasonConfirmInvalid      = "confirm-invalid"      // the client's answer is not an explicit yes
	ReasonOutputSchema        = "output-schema"        // structuredContent violates the pinned outputSchema
	ReasonResultTooLarge      = "result-too-large"     // result_bytes exceeded
	ReasonInvalidResult       = "invalid-result"       // the result is not one unambiguous JSON object
	ReasonCallTimeout         = "call-timeout"         // no result within call_timeout
)

// Codes of verdicts that proceed, for audit events.
const (
	CodeAllowed            = "allowed"
	CodeWarned             = "warned"              // a warn that proceeded (allow_warn)
	CodeLocalPass          = "local-pass"          // a stdio server passed before_connect unasked
	CodeConfirmDestructive = "confirm-destructive" // confirm_destructive and the pinned annotations
	CodeConfirmPolicy      = "confirm-policy"      // a tool entry's "confirm": true
	CodeConfirmProvider    = "confirm-provider"    // a provider decided require_confirmation
	CodeConfirmAccepted    = "confirm-accepted"    // a person explicitly said yes
)

// A Refusal is why a connection, session, call or result does not
// proceed. It is data for the JSON-RPC error's data member: every string in
// it is mcpseal's own words, a stable code, a safe name (contract.SafeName)
// or a digest — never text a server or a provider wrote.
type Refusal struct {
	Kind Kind `json:"-"`
	// Reason is one of the Reason* codes.
	Reason string `json:"reason"`
	// Stage is the hook that refused (KindPreflight and KindConfirm).
	Stage Stage `json:"stage,omitempty"`
	// Why is one sentence in mcpseal's words.
	Why string `json:"why"`
	// Tool is the safe name of the tool, for calls and results.
	Tool string `json:"tool,omitempty"`
	// Pointer is the failing JSON pointer of a schema violation, each
	// token reduced to [A-Za-z0-9_.:-] (see SafePointer).
	Pointer string `json:"pointer,omitempty"`
	// Keyword is the JSON Schema keyword that failed ("required", "type").
	Keyword string `json:"keyword,omitempty"`
	// Provider names the provider that refused: "builtin" or a name from
	// the host's policy file.
	Provider string `json:"provider,omitempty"`
	// Receipt summarises a verified signed receipt behind the refusal.
	Receipt *ReceiptRef `json:"receipt,omitempty"`
	// Hint says how the host could allow it, in mcpseal's words.
	Hint string `json:"hint,omitempty"`
}

func (r *Refusal) Error() string { return r.Why }

// ReceiptRef is the evidence of a verified receipt, in the shape of the
// preflight proposal's refusal: the receipt's kind, decision, the SHA-256
// of its canonical JSON and the key that signed it.
type ReceiptRef struct {
	Kind      string       `json:"kind"`
	Decision  Decision     `json:"decision"`
	SHA256    string       `json:"sha256"`
	Signature SignatureRef `json:"signature"`
}

// SignatureRef names the key of a receipt's signature.
type SignatureRef struct {
	KID string `json:"kid"`
}

// A Verdict is the outcome of one hook: every provider's decision
// combined. Exactly one of three things follows: Refusal is set (refuse);
// Decision is RequireConfirmation (ask a person, see Confirm); or the
// stage proceeds (Decision is Allow, or Warn when the host opted in).
type Verdict struct {
	Stage    Stage
	Decision Decision
	// Code is a stable code for the audit event: a Code* constant when the
	// stage proceeds or asks, the refusal's reason otherwise.
	Code string
	// Provider is who decided: "builtin" or a configured provider.
	Provider string
	// Tool is the safe name of the tool (before_tool_call).
	Tool string
	// Receipt is the deciding receipt, when an http provider decided.
	Receipt *ReceiptRef
	// Refusal is set when the stage must not proceed.
	Refusal *Refusal
	// Drifted: the call is under a contract the monitor posture forwarded
	// although it drifted from its pin (before_tool_call).
	Drifted bool
}

// Proceeds reports whether the stage may go on without asking anyone.
func (v Verdict) Proceeds() bool { return v.Refusal == nil && v.Decision != RequireConfirmation }
