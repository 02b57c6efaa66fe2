// Package pin is mcpseal's pin store: it remembers the contract each server
// showed the first time (trust on first use), or under strict the first
// contract a person approved, answers whether a later listing matches it,
// records drift as a pending change for a person to review, and keeps a
// hash-chained event log that makes tampering with any of it evident.
//
// # Postures
//
// The caller's posture says what Observe trusts without a person:
//
//	guard    trust on first use: a server's first contract is pinned; any
//	         later drift is recorded and blocks. A new client profile is
//	         pinned when every definition it shares with a pinned profile is
//	         identical there (see Profiles).
//	strict   no trust on first use and no new profile without review: a
//	         server's first contract is recorded as its pending change
//	         (Drift, compared with the empty contract) and nothing is pinned
//	         until a person approves it; a new profile is pinned only when
//	         its whole contract equals a pinned profile's.
//	monitor  pins on first use and records drift as guard does, but the
//	         caller forwards everything: it reports, it never protects.
//
// A server whose record holds a first contract awaiting approval and no
// pinned profile stays that way under every posture: a later guard or
// monitor session gets Drift again (with AwaitingApproval), never a silent
// first pin, because someone chose strict for that server before. Only
// Approve, or Forget followed by a first use under guard or monitor, pins it.
//
// # Layout
//
// Everything lives under $MCPSEAL_HOME/pins (default ~/.mcpseal/pins),
// folders 0700, files 0600:
//
//	pins/.lock              flock: exclusive for every change, shared for reads
//	pins/events.jsonl       the event chain (append-only)
//	pins/<id>.json          one record per server
//	pins/<id>.json.new      a record written but not yet committed (see Commit)
//	pins/seen/<id>          last-seen time (RFC 3339); not chained, not security relevant
//
// # Server identity
//
// A server's id is 16 lowercase hex characters: the first 16 of
// SHA-256("name\x00" + NAME) when the user names it (run --name NAME), else of
// SHA-256("argv\x00" + A), where A is the exact argv as a JSON array: strings
// escaped as RFC 8785 does (only '"', '\\' and U+0000–U+001F; \b \t \n \f \r
// in short form, the rest as \u00xx), no whitespace, and every byte that is
// not valid UTF-8 written as \udcXX (XX its value in lowercase hex, Python's
// "surrogateescape"), so that different argvs never share an id.
// Raw argv values never reach the disk: they can hold tokens. The stored
// label is contract.SafeName(NAME), or the SafeName of argv[0]'s base name
// followed by " [N args]". The vectors in testdata/pin/identity.json pin
// this down for other implementations.
//
// # Profiles
//
// A server may legitimately list more to a client that declares more
// capabilities (the reference server-everything lists get-roots-list only to
// clients that declare roots). A record therefore pins one contract per
// profile: the protocol version and the sorted set of capability names the
// client declared, written by ProfileKey as "2025-06-18|elicitation,roots".
// A listing is compared with the pin of its own profile. A profile seen for
// the first time on a pinned server is accepted under guard (and recorded
// under monitor) only if every definition it shares by kind and name with
// any pinned profile is identical there (the same digests) and its
// instructions are identical to every pinned profile's; under strict only if
// its whole contract equals one pinned profile's. Anything else is drift. A
// record awaiting its first approval has no profile to compare with: every
// listing is drift from the empty contract.
//
// # Record file
//
// A record is one JSON object on one line, written by this package
// (encoding/json: sorted map keys, no HTML escaping, no indentation, so the
// stored canonical definitions keep their bytes). Laid out for reading:
//
//	{
//	  "version": 1,
//	  "id": "3f9a0c1b2d4e5f60",
//	  "label": "memory",
//	  "created": "2026-11-02T09:00:00Z",
//	  "updated": "2026-11-02T09:00:00Z",
//	  "profiles": {
//	    "2025-06-18|roots": {
//	      "pinned": "2026-11-02T09:00:00Z",
//	      "contract": "<64 hex>",
//	      "sets": {"prompts": "<hex>", "resourceTemplates": "<hex>", "resources": "<hex>", "tools": "<hex>"},
//	      "instructions": "<hex>" or null,
//	      "definitions": {"tools": [{"name": "read_graph", "digest": "<hex>"}], ...}
//	    }
//	  },
//	  "pending": null or {
//	    "profile": "2025-06-18|roots",
//	    "detected": "...",
//	    "contract": ..., "sets": ..., "instructions": ..., "definitions": ...,  // what the server showed
//	    "base": {"contract": ..., "sets": ..., "instructions": ..., "definitions": ...},  // what it was compared with
//	    "changes": [{"kind": "tools", "name": "read_graph", "op": "changed", "old": "<hex>", "new": "<hex>",
//	                 "labels": [{"code": "new-field", "detail": "..."}]}]
//	  },
//	  "reviewed": null or {"profile": "...", "digest": "<pending contract digest>", "time": "..."},
//	  "definitions": {"<hex>": <the RFC 8785 form of the definition>},
//	  "instructions": {"<hex>": "<instructions text>"}
//	}
//
// "profiles" is an empty object while a server awaits its first approval
// (see Postures): "pending" then holds the first contract it showed, with
// the empty contract as its base and every definition and the instructions
// "added" in its changes. A record with no profile and nothing pending, or
// with no profile and a base that is not the empty contract, is malformed.
//
// Definitions and instructions texts are stored once, addressed by digest,
// for every contract the record mentions (profiles, pending, base), so that
// review can render a full diff. Lists keep the contract's order (names in
// UTF-16 order, ties by digest) and may repeat a name when a server does.
// Every digest is recomputed when a record is read: a definition whose
// SHA-256 is not its key, or a contract whose stored digests do not match its
// definitions, makes the record malformed. The pending change is "reviewed"
// when "reviewed" names its profile and contract digest; a new pending
// change with another digest therefore starts unreviewed.
//
// # Event chain
//
// events.jsonl holds one JSON object per line, in this member order:
//
//	{"seq":1,"time":"2026-11-02T09:00:00Z","op":"pin","id":"3f9a0c1b2d4e5f60","record":"<64 hex>","prev":"0000…0000"}
//
// seq counts from 1 with no gaps; op is pin (first pin), profile (a profile
// added), drift (a pending change recorded, including a server's first
// contract seen under strict, which pins nothing), review (a pending change
// marked reviewed), approve (a pending change pinned; for a server awaiting
// its first approval, its first pin) or forget; record is the
// SHA-256 of the record file's bytes after the operation (null after
// forget); prev is the SHA-256 of the previous line's bytes without its
// newline (64 zeros for the first line). Lines must be exactly as this
// package writes them; the vectors in testdata/pin/events pin the format.
//
// # Tamper evidence
//
// Every read checks the whole chain, then the server's record against its
// latest event. The store holds (an error wrapping ErrTampered, under every
// posture, never a silent re-pin) when events.jsonl cannot be read or parsed
// or its chain is broken (every server), when a server's latest event names a
// record that is missing or has other bytes, when a record file exists for a
// server with no event or whose latest event is forget, and when a record
// does not parse or its digests do not add up. These rules look at the chain,
// not at what the record holds: a record that holds only a first contract
// awaiting approval is checked like any other, and deleting it holds the
// server too (a guard session would otherwise pin what strict refused to
// trust). Forget is the deliberate way back. A same-user process can still
// rewrite the whole store consistently, or delete it entirely: this is
// tamper evidence, not tamper proofing.
//
// # Commit
//
// A change writes <id>.json.new (fsync), appends its event (fsync), renames
// the new record into place and syncs the folder, all under the exclusive
// lock. A crash between the append and the rename leaves a .new file whose
// hash is the latest event's: the next reader uses it, and the next writer
// renames it into place. A crash during the append leaves a final line
// without its newline: it is ignored, and the next writer truncates it. No
// other state is repaired.
//
// # Example
//
//	st, _ := pin.Open(home)
//	id := pin.IdentityForName("memory")
//	res, err := st.Observe(id, pin.Observation{ClientVersion: "2025-06-18", Capabilities: []string{"roots"}}, c, pin.Guard, time.Now())
//	switch {
//	case errors.Is(err, pin.ErrTampered): // hold: the pin cannot be trusted
//	case err != nil: // hold: the pin could not be read or written
//	case res.Outcome == pin.Drift: // block; res.Changes carries the labels
//	}
package pin

import (
	"errors"
	"fmt"

	"github.com/mcpseal/mcpseal/contract"
)

// Size limits for what the store reads back from disk. The files are ours,
// but a reader must not trust their size: a corrupted or planted file must
// fail, not exhaust memory.
const (
	// maxRecordSize bounds one record file. A realistic listing of 10,000
	// tools is about 10 MB; a record holds a few profiles, a pending change
	// and its base, deduplicated by digest. 256 MiB leaves a wide margin.
	maxRecordSize = 256 << 20
	// maxEventsSize bounds events.jsonl. An event line is about 250 bytes
	// and only changes append (a matching session writes nothing), so
	// 256 MiB is about a million pins, drifts and approvals.
	maxEventsSize = 256 << 20
	// maxSeenSize bounds a last-seen file: one RFC 3339 time.
	maxSeenSize = 64
	// maxProfileKeyLen bounds a profile key; longer keys are replaced by a
	// digest of the capability names (see ProfileKey).
	maxProfileKeyLen = 256
)

// A Posture says what Observe trusts without a person's review, and what
// a drift does to a session (see the package doc's Postures section).
type Posture string

const (
	// Guard trusts on first use and blocks on any later drift; a new client
	// profile is accepted when every definition it shares with the pin is
	// identical.
	Guard Posture = "guard"
	// Strict trusts nothing without review: a server's first contract is
	// recorded as a pending change, not pinned, and blocks until approved;
	// a new client profile is accepted only when its whole contract equals
	// a pinned profile's.
	Strict Posture = "strict"
	// Monitor pins on first use, records and reports drift, but forwards
	// everything. It is never protection.
	Monitor Posture = "monitor"
)

// ParsePosture returns the posture named s.
func ParsePosture(s string) (Posture, error) {
	switch p := Posture(s); p {
	case Guard, Strict, Monitor:
		return p, nil
	}
	return "", errors.New("posture must be guard, strict or monitor")
}

// Outcome is what Observe found.
type Outcome int

const (
	// FirstPin: the server had no record; the contract is now pinned
	// (guard and monitor only).
	FirstPin Outcome = iota + 1
	// Match: the contract equals the pin of its profile.
	Match
	// ProfileAdded: a new client profile was accepted and pinned.
	ProfileAdded
	// Drift: the contract differs; it is recorded as the pending change and
	// the pin is unchanged. Under strict a server's first contract is
	// Drift too (see Result.AwaitingApproval).
	Drift
)

func (o Outcome) String() string {
	switch o {
	case FirstPin:
		return "first-pin"
	case Match:
		return "match"
	case ProfileAdded:
		return "profile-added"
	case Drift:
		return "drift"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Result is Observe's answer.
type Result struct {
	Outcome Outcome
	// Pinned is the pinned contract the observed one was compared with:
	// the profile's pin after the call, on drift under a new profile the
	// contract made of the pinned definitions it shares, and the empty
	// contract when AwaitingApproval.
	Pinned *contract.Contract
	// Changes lists what differs from Pinned (Drift only).
	Changes []contract.Change
	// Pending is the pending contract's digest (Drift only).
	Pending string
	// AwaitingApproval reports a Drift on a server with no pinned profile:
	// its first contract waits for a person's approval (strict), so
	// Changes lists every definition as added.
	AwaitingApproval bool
}

var (
	// ErrTampered: the store was pinned before for this server and is now
	// missing, unreadable, malformed or inconsistent with the event chain.
	// Errors wrapping it are *TamperError values.
	ErrTampered = errors.New("pin store tampered or unreadable")
	// ErrNotFound: the store has no server with this id or label.
	ErrNotFound = errors.New("no such pinned server")
	// ErrNoPending: the server has no pending change.
	ErrNoPending = errors.New("no pending change")
	// ErrPendingMoved: the pending change is not the one named (it was
	// replaced since it was reviewed).
	ErrPendingMoved = errors.New("the pending change moved")
)

// A TamperError says which server's pin cannot be trusted, and why.
// ID is empty when the whole store is affected.
type TamperError struct {
	ID     string
	Reason string
}

func (e *TamperError) Error() string {
	if e.ID == "" {
		return fmt.Sprintf("%v: %s", ErrTampered, e.Reason)
	}
	return fmt.Sprintf("%v: server %s: %s", ErrTampered, e.ID, e.Reason)
}

func (e *TamperError) Unwrap() error { return ErrTampered }
