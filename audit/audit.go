// Package audit is mcpseal's audit log: one event per decision the gate
// takes (a connection, a listing, a call, a confirmation, a drift, a
// withheld tool or result), appended as JSON lines, hash-chained, rotated
// by size, and verifiable across rotations.
//
// # What an event holds
//
// Operation, outcome, time, server id and label, tool name (reduced by
// contract.SafeName), hook stage, a stable code, provider name, digests
// (definition, contract, receipt), counts, sizes and durations. Never
// arguments, results, descriptions, schemas, credentials, environment
// values, command lines or URLs: the Event type has no field that could
// hold them, and every text field is reduced to a short safe character
// set when it is written, whatever the caller passes.
//
// # Layout
//
// Under $MCPSEAL_HOME/audit (folder 0700, files 0600):
//
//	.lock                       flock: exclusive to append, shared to read
//	current.jsonl               the file being appended to
//	<20-digit first seq>.jsonl  rotated files, named by their first event
//	head                        the last event's seq and line hash
//
// # Line format
//
// One JSON object per line, members in this order, empty ones left out
// (v, seq, time, op, outcome and prev are always present):
//
//	{"v":1,"seq":42,"time":"2026-11-02T09:00:00.123Z","op":"call","outcome":"refused",
//	 "server":"3f9a0c1d2b4e5f60","label":"memory","tool":"delete_entities","stage":"before_tool_call",
//	 "code":"denied","provider":"builtin","digest":"<64 hex>","contract":"<64 hex>","receipt":"<64 hex>",
//	 "count":3,"bytes":512,"ms":12,"anchor":{"seq":41,"hash":"<64 hex>"},"prev":"<64 hex>"}
//
// seq counts from 1 with no gaps across files; prev is the SHA-256 of the
// previous line's bytes without its newline (64 zeros for event 1). A line
// must be exactly as this package writes it: verification decodes and
// re-encodes every line and compares the bytes.
//
// # Rotation and pruning
//
// When current.jsonl would pass MaxFileBytes it is renamed to its first
// seq's name and a new current.jsonl continues the chain: its first prev
// is the hash of the rotated file's last line. When more than MaxFiles
// rotated files exist, the oldest are deleted, and a "prune" event first
// records, as its anchor, the seq and hash of the last deleted line. The
// earliest remaining event must then chain to an anchor in the log: a file
// deleted by anyone else is a gap that verification reports.
//
// # Tamper evidence
//
// A changed, removed, inserted or reordered line breaks the chain. Lines
// removed from the end are caught by the head file, written after each
// append. An append that finds the head ahead of the log (lines removed
// since) or disagreeing with the last line first writes a "gap" event,
// so the removal stays on record. As with the pin store, this is tamper
// evidence, not tamper proofing: a process running as the same user can
// rewrite the whole log consistently.
//
// # Example
//
//	lg, err := audit.Open(home, audit.Options{})
//	err = lg.Append(audit.Event{Op: audit.OpCall, Outcome: audit.Refused,
//		Server: id.ID, Label: id.Label, Tool: name, Code: "denied", Digest: def.Digest})
//	rep, err := audit.Verify(home)
package audit

import (
	"errors"
	"fmt"
	"time"
)

// Op is an event's operation.
type Op string

const (
	OpConnect  Op = "connect"  // before_connect: the server was (not) started
	OpList     Op = "list"     // a contract verified or a listing delivered
	OpCall     Op = "call"     // a tools/call decided, forwarded or answered
	OpConfirm  Op = "confirm"  // a person was asked, and answered (or not)
	OpDrift    Op = "drift"    // the contract drifted from its pin
	OpWithhold Op = "withhold" // a tool left out of a listing, or a result withheld
	// OpPrune and OpGap are the log's own bookkeeping (see the package doc).
	OpPrune Op = "prune"
	OpGap   Op = "gap"
)

// Outcome is what became of the operation.
type Outcome string

const (
	Allowed  Outcome = "allowed"
	Warned   Outcome = "warned" // allowed on a warning the host opted into
	Refused  Outcome = "refused"
	Withheld Outcome = "withheld"
	Asked    Outcome = "asked" // a confirmation request was sent
	Accepted Outcome = "accepted"
	Declined Outcome = "declined"
	Failed   Outcome = "failed"
	Noted    Outcome = "noted" // prune and gap events
)

// Event is one audit event. The Log fills V, Seq and Prev; Time defaults
// to the log's clock.
type Event struct {
	V       int       `json:"v"`
	Seq     int64     `json:"seq"`
	Time    time.Time `json:"time"`
	Op      Op        `json:"op"`
	Outcome Outcome   `json:"outcome"`
	// Server is the 16-hex server id.
	Server string `json:"server,omitempty"`
	// Label is the server's safe label (pin.Identity.Label).
	Label string `json:"label,omitempty"`
	// Tool is the tool's name; it is written reduced by contract.SafeName.
	Tool string `json:"tool,omitempty"`
	// Stage is the preflight hook, when one decided.
	Stage string `json:"stage,omitempty"`
	// Code is a stable code: a policy reason, a gate reason, a label code.
	Code string `json:"code,omitempty"`
	// Provider is the deciding provider: "builtin" or the policy's name.
	Provider string `json:"provider,omitempty"`
	// Digest is the definition's digest (64 hex).
	Digest string `json:"digest,omitempty"`
	// Contract is the contract digest (64 hex).
	Contract string `json:"contract,omitempty"`
	// Receipt is the SHA-256 of a provider's signed receipt (64 hex).
	Receipt string `json:"receipt,omitempty"`
	// Subject and Client are the authenticated caller's subject and client
	// id (the team gateway), reduced to the safe character set (with a
	// digest of the value as sent when reducing changed it: see
	// ReduceSubject); Issuer is its token's issuer (a subject is unique
	// only within its issuer); JTI is the SHA-256 of its access token's
	// jti (64 hex). Never the token.
	Subject string `json:"subject,omitempty"`
	Issuer  string `json:"issuer,omitempty"`
	Client  string `json:"client,omitempty"`
	JTI     string `json:"jti,omitempty"`
	// Count counts things: definitions listed or withheld, changes, events.
	Count int64 `json:"count,omitempty"`
	// Bytes is a size: arguments or result bytes.
	Bytes int64 `json:"bytes,omitempty"`
	// Millis is a duration in milliseconds.
	Millis int64 `json:"ms,omitempty"`
	// Anchor is set on prune events.
	Anchor *Anchor `json:"anchor,omitempty"`
	Prev   string  `json:"prev"`
}

// Anchor names the last event a prune deleted.
type Anchor struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// ErrInvalidEvent: Append was given an event it will not write (an
// unknown operation or outcome, a malformed id or digest, a negative
// number). It is a programming error in the caller.
var ErrInvalidEvent = errors.New("audit: invalid event")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidEvent, fmt.Sprintf(format, args...))
}
