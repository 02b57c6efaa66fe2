package pin

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/contract"
)

// What the store keeps of a session besides its contract, and the rules
// that read it: which capabilities a profile's client declared (the
// new-profile rule) and which protocol the server agreed to (protocol
// drift). See the package doc's Profiles and Protocol sections.

const (
	// maxStoredCapabilities and maxStoredCapabilityBytes bound the
	// capability names kept with a profile. Real clients declare a handful;
	// a longer list is kept as unknown (nil), which counts as declaring
	// every capability (see declared): fail closed, and bounded.
	maxStoredCapabilities    = 256
	maxStoredCapabilityBytes = 16 << 10
	// maxProtocolLen bounds a stored protocol version. Versions are dates
	// (10 bytes); a longer or non-UTF-8 answer is kept as its digest (71
	// bytes, so the stored form of a stored form is itself).
	maxProtocolLen = 128
)

// escapedCapabilities returns the capability names as a profile key holds
// them: escaped, sorted by bytes, without repeats.
func escapedCapabilities(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, escapeProfilePart(n))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// storedCapabilities returns what a profile or pending entry keeps of the
// escaped capability names caps: caps itself, or nil (unknown) past the
// bounds.
func storedCapabilities(caps []string) []string {
	n := 0
	for _, c := range caps {
		n += len(c)
	}
	if len(caps) > maxStoredCapabilities || n > maxStoredCapabilityBytes {
		return nil
	}
	return caps
}

// declared returns the escaped capability names the client of profile key
// declared, as its entry keeps them (stored). When the entry does not
// keep them (version 1 records, overlong lists) they come from the key;
// a hashed key ("sha256:...") cannot be read back, and all reports that
// the profile then counts as having declared every capability, so that no
// later profile can claim a capability as new against it.
func declared(key string, stored []string) (names []string, all bool) {
	if stored != nil {
		return stored, false
	}
	_, caps, ok := ParseProfileKey(key)
	if !ok {
		return nil, true
	}
	return escapedCapabilities(caps), false
}

// newProfileDowngrade judges the protocol of a profile seen for the first
// time: a server that answers a new client with a version older than the
// client asked for and older than the newest it agreed to under any pinned
// profile is downgrading, not negotiating (a change labelled
// protocol-downgraded, from that newest version). Nil otherwise.
func newProfileDowngrade(r *record, asked, answered string) *contract.Change {
	if !contract.ProtocolDowngraded(asked, answered) {
		return nil
	}
	newest := ""
	for _, key := range r.profileKeys() {
		if p := r.Profiles[key].Protocol; p != nil && (newest == "" || contract.ProtocolDowngraded(*p, newest)) {
			newest = *p
		}
	}
	if newest == "" || !contract.ProtocolDowngraded(newest, answered) {
		return nil
	}
	ch, _ := contract.CompareProtocol(newest, answered)
	return &ch
}

// subset reports whether every name of a is in b.
func subset(a, b []string) bool {
	for _, n := range a {
		if !slices.Contains(b, n) {
			return false
		}
	}
	return true
}

// declaresNewCapability reports whether caps (escaped) holds a name that
// no pinned profile of r declared.
func declaresNewCapability(r *record, caps []string) bool {
	known := map[string]bool{}
	for key, p := range r.Profiles {
		names, all := declared(key, p.Capabilities)
		if all {
			return false
		}
		for _, n := range names {
			known[n] = true
		}
	}
	for _, c := range caps {
		if !known[c] {
			return true
		}
	}
	return false
}

// normalizeProtocol returns the stored form of a protocol version: the
// version itself, or, when it is longer than maxProtocolLen or not valid
// UTF-8, "sha256:" and the hex SHA-256 of its bytes (still compared
// exactly, and never a date).
func normalizeProtocol(v string) string {
	if len(v) <= maxProtocolLen && utf8.ValidString(v) {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// modernVersion returns the first modern version (contract.IsModernProtocol)
// a pinned profile of r records, in key order; ok is false when the
// server never spoke modern as far as the record shows. A profile without
// a recorded protocol (version 1) counts when its key's version is
// modern: a 2026-07-28 profile's key is the version it runs on.
func modernVersion(r *record) (string, bool) {
	for _, key := range r.profileKeys() {
		p := r.Profiles[key]
		v := ""
		if p.Protocol != nil {
			v = *p.Protocol
		} else if kv, _, ok := ParseProfileKey(key); ok {
			v = kv
		}
		if contract.IsModernProtocol(v) {
			return v, true
		}
	}
	return "", false
}

// protocolChange returns the protocol change of a session of profile p
// (nil for a profile r has not pinned) that ran on protocol (stored form)
// and whose server refused server/discover when discoverRefused; nil when
// there is none. fallback reports that the change holds a refused
// server/discover after the server had spoken modern, which a person's
// approval then allows for p (sessionFacts.Fallback).
func protocolChange(r *record, p *profileEntry, protocol string, discoverRefused bool) (ch *contract.Change, fallback bool) {
	if p != nil && p.Protocol != nil {
		if c, ok := contract.CompareProtocol(*p.Protocol, protocol); ok {
			ch = &c
		}
	}
	if !discoverRefused || p != nil && p.Fallback {
		return ch, false
	}
	modern, ok := modernVersion(r)
	if !ok {
		return ch, false
	}
	if ch == nil {
		c := contract.FallbackChange(modern, protocol)
		return &c, true
	}
	ch.Labels = append([]contract.Label{contract.FallbackLabel(modern)}, ch.Labels...)
	return ch, true
}
