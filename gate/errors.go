package gate

import (
	"encoding/json"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// JSON-RPC error codes mcpseal answers with. They sit in -32000..-32019, the
// range the 2026-07-28 specification leaves to implementations, are
// documented in docs/error-codes.md and never change meaning.
const (
	// CodeBlocked: the server's contract drifted from its pin; the session
	// is blocked and nothing more reaches the server.
	CodeBlocked = -32001
	// CodeHeld: the pin store is missing, unreadable or tampered with, so
	// the contract cannot be checked; the session is held.
	CodeHeld = -32002
	// CodeUnverified: the contract could not be verified (the server timed
	// out, sent invalid definitions, failed a listing or played paging tricks).
	CodeUnverified = -32003
	// CodeServerExited: the server process exited or crashed.
	CodeServerExited = -32004
	// CodeRefused: the gate refused this one message (too large, a batch,
	// the queue is full, an id that collides with the gate's own).
	CodeRefused = -32005
	// CodeUnknownTool: a call named a tool that is not in the verified
	// contract; it was not forwarded.
	CodeUnknownTool = -32006
	// CodeWithheld: the definition is withheld by the team's lock (not
	// approved there: new, changed, pending or duplicate); a call to it
	// was not forwarded.
	CodeWithheld = -32007
)

// Reasons carried in error data. Stable strings.
const (
	ReasonDrift             = "drift"
	ReasonUnapproved        = "awaiting-approval"
	ReasonPinStore          = "pin-store"
	ReasonTimeout           = "timeout"
	ReasonInvalidDefinition = "invalid-definition"
	ReasonDuplicateName     = "duplicate-name"
	ReasonListingFailed     = "listing-failed"
	ReasonPaging            = "paging"
	ReasonTooMany           = "too-many-definitions"
	// ReasonListingTooLarge: a verification round's listing pages came to
	// more than Limits.MaxListingBytes.
	ReasonListingTooLarge = "listing-too-large"
	ReasonServerExited    = "server-exited"
	ReasonFrameTooLarge   = "frame-too-large"
	ReasonBatch           = "batch"
	ReasonQueueFull       = "queue-full"
	ReasonIDCollision     = "id-collision"
	ReasonUnknownTool     = "unknown-tool"
	ReasonInvalidMessage  = "invalid-message"
	ReasonWithheld        = "withheld"
	// ReasonTaskUnsupported: a tools/call with "task", or a tasks/result
	// (the gate does not run calls as tasks; their results would pass
	// unchecked).
	ReasonTaskUnsupported = "task-unsupported"
	// ReasonUnreadable: a result the gate must read repeats a member name,
	// has member names equal up to case, or a member of the wrong type.
	ReasonUnreadable = "unreadable"
	// ReasonServerRequest: a server request in a 2026-07-28 session, whose
	// protocol has no server-to-client requests (input_required answers
	// replace them).
	ReasonServerRequest = "server-request"
	// ReasonLookAlike: a server's request for the person's input that
	// names mcpseal, or an input request key in the gate's own space: it
	// could pass for the gate's own confirmation.
	ReasonLookAlike = "look-alike"
	// ReasonConfirmRetry: a tools/call that answers a confirmation (a
	// requestState in the gate's space) the gate did not ask, asked about
	// another call, or already had its one answer.
	ReasonConfirmRetry = "confirm-retry"
	// ReasonStale: a resumed session carried facts of its handshake
	// (instructions, protocol) that are not the pin (pin.Stale). Nothing
	// was recorded; the transport ends the session (HTTP: 404) so that
	// the client initializes a new one, whose handshake is observed.
	ReasonStale = "session-stale"
)

// ServerRef names the server in error data: an ID and a safe label, never
// raw command-line values.
type ServerRef struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// ChangeRef is one changed definition in error data: kind, a name reduced
// to a safe character set, and stable label codes — never the changed text.
type ChangeRef struct {
	Kind   string   `json:"kind"`
	Name   string   `json:"name"`
	Labels []string `json:"labels"`
}

// ErrorData is the data member of every error mcpseal answers with.
type ErrorData struct {
	Reason  string      `json:"reason"`
	Server  ServerRef   `json:"server"`
	Review  string      `json:"review,omitempty"`
	Changes []ChangeRef `json:"changes,omitempty"`
	// MoreChanges counts the changes past the first 100 that Changes
	// leaves out, and LabelCounts the changes carrying each label code,
	// over all of them.
	MoreChanges int            `json:"more_changes,omitempty"`
	LabelCounts map[string]int `json:"label_counts,omitempty"`
	Tool        string         `json:"tool,omitempty"`
}

// A closure is why a session stopped forwarding: every later client request
// gets its error.
type closure struct {
	code    int
	reason  string
	message string
	data    []byte // JSON of ErrorData
}

// maxRefs bounds the changes an error names: an error is read by a
// model, and a long list helps no one. Those with telling labels come
// first (contract.RiskFirst); MoreChanges counts the rest.
const maxRefs = 100

func changeRefs(changes []contract.Change) (refs []ChangeRef, more int) {
	changes = contract.RiskFirst(changes)
	refs = make([]ChangeRef, 0, min(len(changes), maxRefs))
	for i, ch := range changes {
		if i == maxRefs {
			return refs, len(changes) - maxRefs
		}
		refs = append(refs, ChangeRef{Kind: string(ch.Kind), Name: contract.SafeName(ch.Name), Labels: ch.Codes()})
	}
	return refs, 0
}

func (s *Session) errorData(reason string) ErrorData {
	return ErrorData{Reason: reason, Server: ServerRef{ID: s.cfg.Identity.ID, Label: s.cfg.Identity.Label}}
}

func marshalData(d ErrorData) []byte {
	b, err := json.Marshal(d)
	if err != nil {
		// ErrorData holds only strings; Marshal cannot fail.
		panic(err)
	}
	return b
}

func (s *Session) newClosure(code int, message string, d ErrorData) *closure {
	return &closure{code: code, reason: d.Reason, message: message, data: marshalData(d)}
}

func (c *closure) response(id []byte) []byte {
	return jsonrpc.NewError(id, c.code, c.message, c.data)
}
