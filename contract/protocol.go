package contract

import (
	"fmt"
	"time"
)

// The protocol a session runs on is part of what a server shows: a server
// that spoke 2026-07-28 and now answers an older version, or refuses
// server/discover so that the client falls back to initialize, changes what
// the client and the model get (other methods, other guarantees) without
// changing one definition. The pin store pins the protocol with each
// profile and reports a difference as a Change of the pseudo-kind
// ProtocolKind, labelled with one of these codes:
//
//	protocol-downgraded   the server agreed to an older version than pinned, or
//	                      refused server/discover after it had spoken 2026-07-28
//	protocol-changed      the version differs otherwise (newer, not a date, absent)
const (
	CodeProtocolDowngraded = "protocol-downgraded"
	CodeProtocolChanged    = "protocol-changed"
)

// ProtocolCodes lists the protocol label codes. They are not in
// LabelCodes, which lists what a definition or the instructions can be
// labelled with.
var ProtocolCodes = []string{CodeProtocolDowngraded, CodeProtocolChanged}

// ProtocolKind is the pseudo-kind of the session's protocol version in a
// Change. It is not in Kinds. A protocol Change has Name "", Op
// OpChanged, and Old and New hold the two versions themselves (not
// digests; "" when a session named none). The versions come from the
// server: like names, they may be shown at a terminal (escaped), never to
// a model; error data carries only the kind and the label codes.
const ProtocolKind Kind = "protocol"

// ModernProtocol is the first protocol version of the stateless generation
// (no initialize; server/discover).
const ModernProtocol = "2026-07-28"

// protocolDate parses a protocol version, which the specification writes
// as a date YYYY-MM-DD; ok is false for anything else.
func protocolDate(v string) (time.Time, bool) {
	if len(v) != len("2006-01-02") {
		return time.Time{}, false
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil || t.Format(time.DateOnly) != v {
		return time.Time{}, false
	}
	return t, true
}

// IsModernProtocol reports whether version v is a date on or after
// ModernProtocol: a stateless-generation version.
func IsModernProtocol(v string) bool {
	t, ok := protocolDate(v)
	m, _ := protocolDate(ModernProtocol)
	return ok && !t.Before(m)
}

// ProtocolDowngraded reports whether moving from version old to version
// new is a downgrade: both are dates and new is the earlier.
func ProtocolDowngraded(old, new string) bool {
	a, aok := protocolDate(old)
	b, bok := protocolDate(new)
	return aok && bok && b.Before(a)
}

// CompareProtocol returns the change from pinned version old to observed
// version new; ok is false when they are equal.
func CompareProtocol(old, new string) (ch Change, ok bool) {
	if old == new {
		return Change{}, false
	}
	ch = Change{Kind: ProtocolKind, Op: OpChanged, Old: old, New: new}
	if ProtocolDowngraded(old, new) {
		ch.Labels = []Label{{Code: CodeProtocolDowngraded, Detail: fmt.Sprintf("Protocol downgraded: %s to %s", visibleLine(old), visibleLine(new))}}
	} else {
		ch.Labels = []Label{{Code: CodeProtocolChanged, Detail: fmt.Sprintf("Protocol changed: %s to %s", visibleLine(shownVersion(old)), visibleLine(shownVersion(new)))}}
	}
	return ch, true
}

// FallbackChange returns the change of a session in which the server
// refused server/discover, so the client fell back to initialize and runs
// on version observed, although the server had spoken modern (a version
// IsModernProtocol accepts) before.
func FallbackChange(modern, observed string) Change {
	return Change{Kind: ProtocolKind, Op: OpChanged, Old: modern, New: observed, Labels: []Label{FallbackLabel(modern)}}
}

// FallbackLabel is the protocol-downgraded label of a refused
// server/discover after the server had spoken version modern.
func FallbackLabel(modern string) Label {
	return Label{Code: CodeProtocolDowngraded, Detail: fmt.Sprintf("Protocol downgraded: the server refused server/discover after speaking %s; the client fell back to initialize", visibleLine(modern))}
}

func shownVersion(v string) string {
	if v == "" {
		return "none"
	}
	return v
}
