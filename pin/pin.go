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
//	         pinned by the new-profile rule (see Profiles).
//	strict   no trust on first use and no new profile without review: a
//	         server's first contract is recorded as its pending change
//	         (Drift, compared with the empty contract) and nothing is pinned
//	         until a person approves it; a new profile is held for review
//	         too, even when it shows nothing new.
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
//	pins/seen/<id>          last-seen time (RFC 3339); not chained, not security relevant, not fsynced
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
// profile: the protocol version the client asked for and the sorted set of
// capability names it declared, written by ProfileKey as
// "2025-06-18|elicitation,roots". Only what the client declared makes the
// key; the version the server answers is pinned with the profile (see
// Protocol), never part of it. A listing is compared with the pin of its own
// profile. A record awaiting its first approval has no profile to compare
// with: every listing is drift from the empty contract.
//
// The new-profile rule. A profile seen for the first time on a pinned server
// is accepted without review, under guard (and under monitor, which records
// but forwards), only when all of these hold:
//
//   - every definition it shares by kind and name with a pinned profile is
//     identical there (the same digests), and its instructions are
//     identical to every pinned profile's;
//   - it lists a definition (kind and name) no pinned profile lists only if
//     its client declares a capability name that no pinned profile
//     declared; otherwise each one it lists is pinned under the profile of
//     the server's first pin ("origin": "pin", kept through approvals) or
//     under a profile whose client declared no capability this one does
//     not, so a definition shown for a capability (a roots tool, or what a
//     client declaring a capability of its own was shown) cannot reach
//     clients without it;
//   - its session shows no protocol change (see Protocol).
//
// Under strict it is never accepted without review: it is drift, held for
// a person even when nothing in it differs. Anything else is drift too,
// compared with the pinned definitions it shares (extra ones "added").
//
// The reasoning: servers vary their listings by the client's capabilities
// (a roots tool for clients with roots), and that is the only variation a
// person has not already seen that the store lets through, because a
// capability is the one input the client, not the server, controls. Nothing
// the server controls — the version it answers, the generation it agrees to
// speak, whether it refuses server/discover, its paging or timing — can
// make a client without a new capability see a definition that was never
// pinned. A new client version with the same capabilities is a new profile
// too, and it sees nothing new either. The cost: a server that lists more to
// a new client version, for no capability, needs one review.
//
// Each profile entry keeps the escaped capability names its client declared
// ("capabilities"). A profile an earlier release pinned does not: its names
// are read from its key (ParseProfileKey), and a hashed key ("sha256:...")
// counts as having declared every capability, so no capability can be new
// against it (fail closed). The store keeps at most 256 names (16 KiB); a
// longer list is kept as unknown the same way.
//
// # Protocol
//
// Each profile also pins the protocol version the server agreed to
// (Observation.Protocol: a legacy initialize result's protocolVersion, for
// 2026-07-28 the request's version), stored as sent when it is at most 128
// bytes of UTF-8, else as "sha256:" and its hex digest. A later session of
// the profile on another version is drift with a change of the pseudo-kind
// contract.ProtocolKind (Name "", Old and New the two versions), labelled
// protocol-downgraded when both are dates (YYYY-MM-DD) and the new one is
// the earlier, else protocol-changed (a newer version, a non-date, or a
// session that named none: "" is a value like any other). The definitions
// may all match: the session is blocked all the same (guard, strict) or
// reported (monitor).
//
// A session in which the client probed server/discover and the server
// refused it (Observation.DiscoverRefused), when a pinned profile shows the
// server spoke 2026-07-28 or later before, is drift too, labelled
// protocol-downgraded (Old the modern version, New the session's), on a
// pinned profile or a new one, even when every definition matches. A person
// who approves that change allows it for that profile ("fallback": true):
// the same fallback session matches from then on, while the modern
// profile still verifies as before, and a fallback under another profile,
// or to another version, is drift again. A server that never spoke
// 2026-07-28 refuses every probe; that is no change.
//
// A profile pinned by an earlier release has no protocol ("protocol":
// null). The first session of that profile that matches records the
// protocol it ran on, as a profile event, and later sessions are checked
// against it. Such a profile counts as having spoken 2026-07-28 when its
// key's version is a modern one.
//
// # Record file
//
// A record is one JSON object on one line, written by this package
// (encoding/json: sorted map keys, no HTML escaping, no indentation, so the
// stored canonical definitions keep their bytes). Laid out for reading:
//
//	{
//	  "version": 2,
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
//	      "definitions": {"tools": [{"name": "read_graph", "digest": "<hex>"}], ...},
//	      "capabilities": ["roots"] or null,   // escaped as in the key; null: not known (see Profiles)
//	      "protocol": "2025-06-18" or null,    // null: not recorded yet (see Protocol)
//	      "fallback": false                    // a refused server/discover approved for this profile
//	    }
//	  },
//	  "pending": {                             // {} when nothing is pending
//	    "2025-06-18|roots": {
//	      "detected": "...",
//	      "contract": ..., "sets": ..., "instructions": ..., "definitions": ...,  // what the server showed
//	      "capabilities": [...] or null, "protocol": "..." or null, "fallback": false,  // of that session
//	      "base": {"contract": ..., "sets": ..., "instructions": ..., "definitions": ...},  // what it was compared with
//	      "changes": [{"kind": "tools", "name": "read_graph", "op": "changed", "old": "<hex>", "new": "<hex>",
//	                   "labels": [{"code": "new-field", "detail": "..."}]}]
//	    }
//	  },
//	  "reviewed": null or {"digest": "<review-set digest>", "time": "..."},
//	  "definitions": {"<hex>": <the RFC 8785 form of the definition>},
//	  "instructions": {"<hex>": "<instructions text>"}
//	}
//
// "pending" holds one change per profile whose session drifted: a drift
// under one profile replaces that profile's entry only. A pending entry's
// "fallback" says its session refused server/discover after the server had
// spoken 2026-07-28 (the change then carries that protocol-downgraded
// label). "profiles" is an empty object while a server awaits its first
// approval (see Postures): "pending" then holds the first contracts it
// showed, each with the empty contract as its base and every definition and
// the instructions "added" in its changes. A record with no profile and
// nothing pending, or with no profile and a base that is not the empty
// contract, is malformed.
//
// Version 1 records (earlier releases) still read: they had a single
// "pending" object with a "profile" member, a review mark {"profile",
// "digest" (the pending contract digest), "time"}, and profiles without
// "capabilities", "protocol" and "fallback". They are converted in memory
// (the pending change becomes the only pending entry, its and every
// profile's capabilities and protocol null, the review mark the review-set
// digest of the one-entry set it named) and written as version 2 by the
// next change. The file's bytes are what the event chain covers, so the
// conversion changes nothing about tamper evidence. A record is read only
// in the shape of the version it names; any other version is malformed.
//
// Definitions and instructions texts are stored once, addressed by digest,
// for every contract the record mentions (profiles, pending, base), so that
// review can render a full diff. Lists keep the contract's order (names in
// UTF-16 order, ties by digest) and may repeat a name when a server does.
// Every digest is recomputed when a record is read: a definition whose
// SHA-256 is not its key, or a contract whose stored digests do not match its
// definitions, makes the record malformed.
//
// # Review
//
// A server's pending changes are reviewed and approved as one set, so that
// a change three clients saw is one review and one approval. The set is
// named by its review-set digest: the hex SHA-256 of the RFC 8785 form of
//
//	{"pending": [ITEM, ...], "type": "mcpseal-review-set", "version": 1}
//
// with one ITEM per pending profile, in byte order of the profile keys:
//
//	{"contract": "<pending contract digest>", "fallback": <bool>,
//	 "profile": "<profile key>", "protocol": "<version>" or null}
//
// (testdata/pin/review-set.json has vectors). MarkReviewed stores that
// digest; the set is reviewed while its digest is the stored one, so a
// drift under any profile (a changed entry, a new one) leaves it
// unreviewed, and Approve of the reviewed digest refuses (ErrPendingMoved).
// Approve pins every pending entry as its profile's pin (contract,
// capabilities, protocol; a fallback entry allows fallback for the
// profile) and clears the set. Where earlier releases took a pending
// contract digest, MarkReviewed and Approve accept the contract digest of
// the only pending profile as naming the set; with several pending it
// names nothing.
//
// # Event chain
//
// events.jsonl holds one JSON object per line, in this member order:
//
//	{"seq":1,"time":"2026-11-02T09:00:00Z","op":"pin","id":"3f9a0c1b2d4e5f60","record":"<64 hex>","prev":"0000…0000"}
//
// seq counts from 1 with no gaps; op is pin (first pin), profile (a profile
// added, or a profile an earlier release pinned given its protocol), drift
// (a profile's pending change recorded, including a server's first contract
// seen under strict, which pins nothing), review (the pending set marked
// reviewed), approve (the pending set pinned; for a server awaiting its
// first approval, its first pin) or forget; record is the
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
// trust). Every file of the store is opened without blocking and without
// following a final link, and must be a regular file (the pins and seen
// folders real folders): a FIFO, socket, device, folder or link in place of
// .lock, events.jsonl, a record, a .new record or a seen file holds the
// server (every server for .lock and events.jsonl) instead of hanging the
// session or being followed elsewhere. Forget is the deliberate way back. A same-user process can still
// rewrite the whole store consistently, or delete it entirely: this is
// tamper evidence, not tamper proofing.
//
// # Commit
//
// A change writes <id>.json.new (fsync) and reads it back: the file must
// decode as a sound record, and the event names the hash of the bytes read
// back (a .new file that fails is removed; none is trusted for its
// contents). Then it appends its event (fsync), renames
// the new record into place and syncs the folder, all under the exclusive
// lock. A crash between the append and the rename leaves a .new file whose
// hash is the latest event's: the next reader uses it, and the next writer
// renames it into place. A crash during the append leaves a final line
// without its newline: it is ignored, and the next writer truncates it. No
// other state is repaired. The last-seen time is replaced atomically but
// not fsynced (see touch): after a crash it may be old, empty or partial,
// and reads as unknown.
//
// # Example
//
//	st, _ := pin.Open(home)
//	id := pin.IdentityForName("memory")
//	o := pin.Observation{ClientVersion: "2025-06-18", Capabilities: []string{"roots"}, Protocol: "2025-06-18"}
//	res, err := st.Observe(id, o, c, pin.Guard, time.Now())
//	switch {
//	case errors.Is(err, pin.ErrTampered): // hold: the pin cannot be trusted
//	case err != nil: // hold: the pin could not be read or written
//	case res.Outcome == pin.Drift: // block; res.Changes carries the labels
//	}
//
// and later, at a terminal, after showing every pending profile's change:
//
//	rec, _ := st.Get(id.ID)
//	st.MarkReviewed(id.ID, rec.PendingDigest)
//	st.Approve(id.ID, rec.PendingDigest, time.Now()) // every pending profile at once
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
	// profile is accepted by the new-profile rule (package doc, Profiles).
	Guard Posture = "guard"
	// Strict trusts nothing without review: a server's first contract is
	// recorded as a pending change, not pinned, and blocks until approved;
	// a new client profile is held for review too.
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
	// Drift: the contract or the session's protocol differs; it is
	// recorded as the profile's pending change and the pin is unchanged.
	// Under strict a server's first contract is Drift too (see
	// Result.AwaitingApproval).
	Drift
	// Stale: the observation was Carried (a session continued from what
	// another process verified) and what it carried — the instructions,
	// the protocol, the fallback — is not the profile's pin, or the profile
	// has none. Nothing was written: carried facts are not evidence about
	// the server, so they never become a pending change. The caller ends
	// the session so that the client starts a new one, whose handshake is
	// observed.
	Stale
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
	case Stale:
		return "stale"
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
	// Changes lists what differs from Pinned (Drift only), a change of
	// kind contract.ProtocolKind last when the protocol differs (Pinned
	// may then equal the observed contract).
	Changes []contract.Change
	// Pending is the pending contract's digest of this profile (Drift
	// only). Review and approval act on the server's whole pending set
	// (Record.PendingDigest).
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
	// ErrPendingMoved: the pending set is not the one named (a profile's
	// change was replaced or added since it was reviewed).
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
