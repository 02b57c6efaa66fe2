package pin

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/contract"
)

// maxProfileLen bounds the profile argument of Observe. ProfileKey never
// makes keys longer than maxProfileKeyLen; this leaves room for callers
// that build keys of their own.
const maxProfileLen = 1024

// Observation is what one session saw of a server besides its contract:
// which client asked (its profile, made only of what the client declared)
// and how the server agreed to speak.
type Observation struct {
	// ClientVersion is the protocol version the client asked for: the
	// params.protocolVersion of its initialize, or the protocol version of
	// a 2026-07-28 request's _meta. Never the server's answer.
	ClientVersion string
	// Capabilities are the names of the capabilities the client declared.
	Capabilities []string
	// Protocol is the version the session runs on as the server agreed to
	// it: a legacy initialize result's protocolVersion, or for 2026-07-28
	// the version the request carried. Empty when not known.
	Protocol string
	// DiscoverRefused reports that the client probed server/discover in
	// this session and the server refused it, so the client fell back to
	// initialize.
	DiscoverRefused bool
	// Carried reports that the contract's instructions, Protocol and
	// DiscoverRefused were not observed from the server in this session
	// but carried from a handshake another process verified (a session
	// continued on another replica, gate.Session.Resume). Only the
	// listings were observed. Observe then answers Stale, writing nothing,
	// unless what was carried is exactly the profile's pin; the listings
	// alone are judged as drift.
	Carried bool
}

// Profile returns the key the observation's contract is pinned under.
func (o Observation) Profile() string { return ProfileKey(o.ClientVersion, o.Capabilities) }

// Observe compares c, seen in a session described by o (see Observation;
// the profile is o.Profile()), with the pin of server id, and records the
// outcome, all under the store's exclusive lock:
//
//   - no record, under guard and monitor: c is pinned (FirstPin) with the
//     client's capability names and o.Protocol;
//   - no record, under strict: nothing is pinned. c becomes the server's
//     pending change for the profile, compared with the empty contract
//     (every definition "added"), and the outcome is Drift with
//     AwaitingApproval set: the first contract too needs a person's review
//     and approval;
//   - a record with no pinned profile (a first contract awaiting approval),
//     under every posture: Drift with AwaitingApproval, as above. A record
//     made under strict is never pinned by a later guard session;
//   - the profile's pin has c's contract digest and the session's protocol
//     is the pinned one (see the package doc's Protocol section): Match
//     (the chain is not written; only the last-seen time is, and, for a
//     profile an earlier release pinned without a protocol, the protocol,
//     as a profile event);
//   - a profile the server was not pinned under: accepted (ProfileAdded)
//     by the new-profile rule of the package doc's Profiles section;
//   - anything else: Drift. c (with o's protocol) is recorded as the
//     profile's pending change, replacing that profile's earlier one and
//     no other, with the labels of contract.Compare and a protocol change
//     when there is one; the pin is unchanged. The pending set then has
//     another review-set digest: it is unreviewed.
//
// Observing the same pending change again (same profile, contract digest,
// protocol and fallback) writes nothing and keeps the review mark.
//
// A server that was pinned before and whose pin is now missing, unreadable,
// malformed or inconsistent with the event chain gets an error wrapping
// ErrTampered, whatever the posture: the store never re-pins silently.
func (s *Store) Observe(id Identity, o Observation, c *contract.Contract, posture Posture, now time.Time) (Result, error) {
	profile := o.Profile()
	switch {
	case !isID(id.ID):
		return Result{}, errors.New("pin: invalid server id")
	case profile == "" || len(profile) > maxProfileLen || !utf8.ValidString(profile):
		return Result{}, errors.New("pin: invalid profile key")
	case c == nil:
		return Result{}, errors.New("pin: no contract")
	}
	if _, err := ParsePosture(string(posture)); err != nil {
		return Result{}, fmt.Errorf("pin: %v", err)
	}
	t := &texts{defs: map[string]json.RawMessage{}, instr: map[string]string{}}
	obs, err := entryFor(c, t)
	if err != nil {
		return Result{}, fmt.Errorf("pin: %v", err)
	}
	caps := escapedCapabilities(o.Capabilities)
	protocol := normalizeProtocol(o.Protocol)
	facts := sessionFacts{Capabilities: storedCapabilities(caps), Protocol: &protocol}

	v, err := s.open(true)
	if err != nil {
		return Result{}, err
	}
	defer v.close()
	r, err := v.recordKnowing(id.ID, t.defs)
	if err != nil {
		return Result{}, err
	}
	now = now.UTC()
	if o.Carried && carriedStale(r, profile, &obs, protocol, o.DiscoverRefused) {
		return Result{Outcome: Stale}, nil
	}

	if r == nil {
		label := id.Label
		if label == "" {
			label = "_"
		}
		r = &record{
			Version:  recordVersion,
			ID:       id.ID,
			Label:    label,
			Created:  now,
			Updated:  now,
			Profiles: map[string]*profileEntry{},
			Pending:  map[string]*pendingEntry{},
		}
		if posture != Strict {
			r.Profiles[profile] = &profileEntry{Pinned: now, Origin: originPin, contractEntry: obs, sessionFacts: facts}
			r.keepTexts(t)
			if err := v.commit(opPin, id.ID, r, now); err != nil {
				return Result{}, err
			}
			v.touch(id.ID, now)
			return Result{Outcome: FirstPin, Pinned: c}, nil
		}
		// Strict trusts nothing on first use: c is recorded below as a
		// pending change against the empty contract.
	}

	for digest, raw := range r.Definitions {
		t.defs[digest] = raw
	}
	maps.Copy(t.instr, r.Instructions)

	var (
		base     contractEntry
		proto    *contract.Change
		fallback bool
	)
	if len(r.Profiles) == 0 {
		// Nothing is pinned yet, whatever the posture: the first contract
		// waits for a person.
		base = emptyEntry()
	} else if p, ok := r.Profiles[profile]; ok {
		proto, fallback = protocolChange(r, p, protocol, o.DiscoverRefused)
		if p.Contract == obs.Contract && proto == nil {
			pinned, err := r.build(&p.contractEntry)
			if err != nil {
				return Result{}, tampered(id.ID, err.Error())
			}
			if p.Protocol == nil {
				// A profile an earlier release pinned: its protocol is
				// recorded the first time a session shows it.
				p.Protocol = &protocol
				r.Updated = now
				if err := v.commit(opProfile, id.ID, r, now); err != nil {
					return Result{}, err
				}
			}
			v.touch(id.ID, now)
			if res, held := s.fleetHold(r, profile, pinned); held {
				return res, nil
			}
			return Result{Outcome: Match, Pinned: pinned}, nil
		}
		base = p.contractEntry
	} else {
		proto, fallback = protocolChange(r, nil, protocol, o.DiscoverRefused)
		if proto == nil {
			proto = newProfileDowngrade(r, o.ClientVersion, protocol)
		}
		if proto == nil && !(s.fleet && len(r.Pending) > 0) && acceptProfile(r, &obs, caps, posture) {
			r.Profiles[profile] = &profileEntry{Pinned: now, Origin: originProfile, contractEntry: obs, sessionFacts: facts}
			// A change pending for this profile was measured against no
			// pin; the next drift is measured against this one.
			delete(r.Pending, profile)
			r.Updated = now
			r.keepTexts(t)
			if err := v.commit(opProfile, id.ID, r, now); err != nil {
				return Result{}, err
			}
			v.touch(id.ID, now)
			return Result{Outcome: ProfileAdded, Pinned: c}, nil
		}
		if base, err = sharedBase(r, &obs); err != nil {
			return Result{}, err
		}
		if proto == nil && s.fleet && len(r.Pending) > 0 && r.Pending[profile] == nil && acceptProfile(r, &obs, caps, Guard) {
			// A fleet holds every profile while a change is pending. A new
			// profile that the new-profile rule would accept (it shows
			// nothing a pinned profile does not, or only what a capability
			// of its own explains) is held without joining the pending set:
			// clients choose their capability names, and each new set of
			// them must not move the set a person is reviewing (approve
			// would never catch up). Once the set is approved, the
			// profile's next session is judged by the posture as always:
			// under strict it is then held for a review of its own.
			pinned, err := r.build(&base)
			if err != nil {
				return Result{}, tampered(id.ID, err.Error())
			}
			v.touch(id.ID, now)
			res, _ := s.fleetHold(r, profile, pinned)
			return res, nil
		}
	}
	facts.Fallback = fallback

	if p, ok := r.Pending[profile]; ok && p.Contract == obs.Contract && equalDigest(p.Protocol, facts.Protocol) && p.Fallback == fallback {
		// The same drift again: keep it, and the review mark, as it is.
		v.touch(id.ID, now)
		pinned, err := r.build(&p.Base)
		if err != nil {
			return Result{}, tampered(id.ID, err.Error())
		}
		return Result{Outcome: Drift, Pinned: pinned, Changes: p.Changes, Pending: p.Contract, AwaitingApproval: len(r.Profiles) == 0}, nil
	}
	pinned, err := r.build(&base)
	if err != nil {
		return Result{}, tampered(id.ID, err.Error())
	}
	changes := contract.Compare(pinned, c)
	if proto != nil {
		changes = append(changes, *proto)
	}
	if changes == nil {
		changes = []contract.Change{}
	}
	r.Pending[profile] = &pendingEntry{Detected: now, contractEntry: obs, sessionFacts: facts, Base: base, Changes: changes}
	r.Updated = now
	r.keepTexts(t)
	if err := v.commit(opDrift, id.ID, r, now); err != nil {
		return Result{}, err
	}
	v.touch(id.ID, now)
	return Result{Outcome: Drift, Pinned: pinned, Changes: changes, Pending: obs.Contract, AwaitingApproval: len(r.Profiles) == 0}, nil
}

// carriedStale reports whether what a Carried observation carried (obs's
// instructions, the protocol, the fallback) differs from profile's pin, or
// there is no such pin to compare it with: a continued session that cannot
// be judged without writing what it did not observe.
func carriedStale(r *record, profile string, obs *contractEntry, protocol string, discoverRefused bool) bool {
	if r == nil {
		return true
	}
	p, ok := r.Profiles[profile]
	if !ok || p.Protocol == nil || !equalDigest(p.Instructions, obs.Instructions) {
		return true
	}
	proto, _ := protocolChange(r, p, protocol, discoverRefused)
	return proto != nil
}

// acceptProfile decides whether obs, seen under a profile r has no pin
// for, from a client that declared the escaped capability names caps, may
// be pinned without review (the new-profile rule).
func acceptProfile(r *record, obs *contractEntry, caps []string, posture Posture) bool {
	// What a profile may draw on without a new capability: the server's
	// first pin (its trust-on-first-use baseline, marked when it was made,
	// never by time), and profiles whose clients declared nothing this one
	// does not. A definition shown only for a capability — a roots tool,
	// or whatever a client that declared a capability of its own was shown
	// — is not shown to clients without it, approved or not.
	drawsOn := func(key string, p *profileEntry) bool {
		if p.Origin == originPin {
			return true
		}
		names, all := declared(key, p.Capabilities)
		return !all && subset(names, caps)
	}
	if posture == Strict {
		// Strict trusts no new profile without a person: it is held for
		// review even when it shows nothing new (review then says so).
		return false
	}
	// Whatever the profile declares, what it shares with a pinned profile
	// must be identical there, and so must the instructions.
	pinnedNames := map[contract.Kind]map[string]bool{}
	for key, p := range r.Profiles {
		if !equalDigest(p.Instructions, obs.Instructions) {
			return false
		}
		within := drawsOn(key, p)
		for _, k := range contract.Kinds {
			pinned := byName(p.Definitions[k])
			for name, digests := range byName(obs.Definitions[k]) {
				if old, ok := pinned[name]; ok && !slices.Equal(old, digests) {
					return false
				}
			}
			if pinnedNames[k] == nil {
				pinnedNames[k] = map[string]bool{}
			}
			for name := range pinned {
				if within {
					pinnedNames[k][name] = true
				}
			}
		}
	}
	// Only a capability no pinned profile declared can explain a
	// definition no pinned profile has. Nothing the server controls (the
	// version it answers, the generation it speaks) is a capability.
	if declaresNewCapability(r, caps) {
		return true
	}
	for _, k := range contract.Kinds {
		for _, ref := range obs.Definitions[k] {
			if !pinnedNames[k][ref.Name] {
				return false
			}
		}
	}
	return true
}

// byName groups definition digests by name, each group sorted.
func byName(refs []definitionRef) map[string][]string {
	m := make(map[string][]string, len(refs))
	for _, ref := range refs {
		m[ref.Name] = append(m[ref.Name], ref.Digest)
	}
	for _, g := range m {
		slices.Sort(g)
	}
	return m
}

// sharedBase returns what obs, seen under a new profile, is compared with:
// for every kind and name obs lists that a pinned profile lists too, the
// definitions of the first profile (in key order) where they differ from
// obs, else of the first profile that has them; and the instructions of the
// first profile whose instructions differ, else of the first profile.
func sharedBase(r *record, obs *contractEntry) (contractEntry, error) {
	keys := r.profileKeys()
	base := contractEntry{Definitions: map[contract.Kind][]definitionRef{}}
	for _, k := range contract.Kinds {
		refs := []definitionRef{}
		observed := byName(obs.Definitions[k])
		names := slices.Sorted(maps.Keys(observed))
		for _, name := range names {
			var chosen []string
			for _, key := range keys {
				digests, ok := byName(r.Profiles[key].Definitions[k])[name]
				if !ok {
					continue
				}
				if chosen == nil {
					chosen = digests
				}
				if !slices.Equal(digests, observed[name]) {
					chosen = digests
					break
				}
			}
			for _, d := range chosen {
				refs = append(refs, definitionRef{Name: name, Digest: d})
			}
		}
		base.Definitions[k] = refs
	}
	first := r.Profiles[keys[0]].Instructions
	base.Instructions = first
	for _, key := range keys {
		if in := r.Profiles[key].Instructions; !equalDigest(in, obs.Instructions) {
			base.Instructions = in
			break
		}
	}
	// The digests of the base come from the contract package, which also
	// puts the definitions in contract order.
	c, err := r.buildUnchecked(&base)
	if err != nil {
		return contractEntry{}, err
	}
	d := c.Digests()
	base.Contract, base.Sets = d.Contract, maps.Clone(d.Sets)
	base.Definitions = refsOf(c)
	return base, nil
}

// emptyEntry describes the empty contract: what a server's first contract
// is compared with while nothing is pinned.
func emptyEntry() contractEntry {
	c := contract.New(nil, nil)
	d := c.Digests()
	return contractEntry{Contract: d.Contract, Sets: maps.Clone(d.Sets), Instructions: d.Instructions, Definitions: refsOf(c)}
}

// refsOf lists c's definitions by name and digest, in contract order.
func refsOf(c *contract.Contract) map[contract.Kind][]definitionRef {
	m := map[contract.Kind][]definitionRef{}
	for _, k := range contract.Kinds {
		refs := []definitionRef{}
		for _, d := range c.Defs[k] {
			refs = append(refs, definitionRef{Name: d.Name, Digest: d.Digest})
		}
		m[k] = refs
	}
	return m
}

// fleetHold is what a store shared by replicas answers for a listing that
// matches its profile's pin while the server has a pending change: a drift
// one replica saw holds the server on every replica, for every profile,
// until a person approves or forgets it. The change reported is the
// profile's own pending change, else the first in key order. held is
// false when nothing is pending or the store is a single machine's.
func (s *Store) fleetHold(r *record, profile string, pinned *contract.Contract) (Result, bool) {
	if !s.fleet || len(r.Pending) == 0 {
		return Result{}, false
	}
	p, ok := r.Pending[profile]
	if !ok {
		p = r.Pending[r.pendingKeys()[0]]
	}
	return Result{Outcome: Drift, Pinned: pinned, Changes: p.Changes, Pending: p.Contract}, true
}
