package pin

import (
	"errors"
	"time"

	"github.com/mcpseal/mcpseal/contract"
)

// A Record is everything the store holds about one server.
type Record struct {
	ID      string
	Label   string
	Created time.Time
	Updated time.Time
	// LastSeen is when a session last checked the server (zero if never
	// recorded). It is not covered by the event chain.
	LastSeen time.Time
	// Profiles holds the pinned contract of every profile, by key order.
	// It is empty while the server awaits its first approval.
	Profiles []Profile
	// Pending holds every pending profile's change, by key order; empty
	// when nothing is pending. They are reviewed and approved as one set.
	Pending []Pending
	// PendingDigest is the review-set digest of Pending (see the package
	// doc's Review section): what MarkReviewed marks and Approve pins. It
	// is "" when nothing is pending.
	PendingDigest string
	// PendingReviewed reports whether the pending set, exactly as it is,
	// was marked reviewed.
	PendingReviewed bool
	// Reviewed is the last review mark, nil if none. It may name an older
	// pending set than PendingDigest (the pending set moved since review).
	Reviewed *Review
}

// AwaitingApproval reports whether no profile is pinned yet: Pending holds
// the first contracts the server showed (under strict), compared with the
// empty contract, and nothing about the server is trusted until they are
// approved.
func (r *Record) AwaitingApproval() bool { return len(r.Profiles) == 0 }

// A Profile is the contract pinned for one client profile.
type Profile struct {
	Key      string
	Pinned   time.Time
	Contract *contract.Contract
	Digests  contract.Digests
	// Protocol is the protocol version the server agreed to, as stored
	// (server text: show it escaped); nil when not recorded yet (pinned
	// by an earlier release).
	Protocol *string
	// Fallback reports that a person approved sessions of this profile in
	// which the server refused server/discover after speaking 2026-07-28.
	Fallback bool
}

// A Pending change is a contract that drifted from the pin under one
// profile, waiting for a person to review and approve it.
type Pending struct {
	Profile  string
	Detected time.Time
	// Digest is the pending contract's digest.
	Digest   string
	Contract *contract.Contract
	Digests  contract.Digests
	// Protocol is the protocol version of the session, nil for a change an
	// earlier release recorded; approving pins it.
	Protocol *string
	// Fallback reports a session in which the server refused
	// server/discover after it had spoken 2026-07-28.
	Fallback bool
	// Base is what the pending contract was compared with: the profile's
	// pin, for a new profile the pinned definitions it shares, or the empty
	// contract when nothing is pinned yet (Record.AwaitingApproval).
	Base        *contract.Contract
	BaseDigests contract.Digests
	// Changes lists what differs from Base, a protocol change last.
	Changes []contract.Change
}

// A Review is a mark left by MarkReviewed: the review-set digest of the
// pending set it covered.
type Review struct {
	Digest string
	Time   time.Time
}

// A Summary is one line of List.
type Summary struct {
	ID      string
	Label   string
	Created time.Time
	Updated time.Time
	// LastSeen is zero if never recorded (see Record.LastSeen).
	LastSeen time.Time
	// Profiles is the number of pinned profiles.
	Profiles int
	// Definitions is the number of distinct (kind, name) pairs pinned
	// across profiles.
	Definitions  int
	DriftPending bool
	// Pending is the contract digest of the first pending profile (by key
	// order), "" if none: what earlier releases reported.
	Pending string
	// PendingDigest is the review-set digest of the pending set, "" if
	// none; PendingProfiles the number of pending profiles.
	PendingDigest   string
	PendingProfiles int
	// AwaitingApproval reports that no profile is pinned yet: the pending
	// changes are the first contracts the server showed (under strict).
	// DriftPending is then set too.
	AwaitingApproval bool
	// Tampered is why the server's pin cannot be trusted, "" when it is
	// intact. The other fields but ID are then empty.
	Tampered string
}

// Get returns the record of the server named by ref: its id, or a label
// that names exactly one server.
func (s *Store) Get(ref string) (*Record, error) {
	v, err := s.open(false)
	if err != nil {
		return nil, err
	}
	defer v.close()
	id, err := v.resolve(ref)
	if err != nil {
		return nil, err
	}
	r, err := v.record(id)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, ErrNotFound
	}
	return v.export(r)
}

func (v *view) export(r *record) (*Record, error) {
	out := &Record{
		ID:       r.ID,
		Label:    r.Label,
		Created:  r.Created,
		Updated:  r.Updated,
		LastSeen: v.lastSeen(r.ID),
	}
	for _, key := range r.profileKeys() {
		p := r.Profiles[key]
		c, err := r.build(&p.contractEntry)
		if err != nil {
			return nil, tampered(r.ID, err.Error())
		}
		out.Profiles = append(out.Profiles, Profile{Key: key, Pinned: p.Pinned, Contract: c, Digests: c.Digests(), Protocol: p.Protocol, Fallback: p.Fallback})
	}
	for _, key := range r.pendingKeys() {
		p := r.Pending[key]
		c, err := r.build(&p.contractEntry)
		if err != nil {
			return nil, tampered(r.ID, err.Error())
		}
		base, err := r.build(&p.Base)
		if err != nil {
			return nil, tampered(r.ID, err.Error())
		}
		out.Pending = append(out.Pending, Pending{
			Profile:     key,
			Detected:    p.Detected,
			Digest:      p.Contract,
			Contract:    c,
			Digests:     c.Digests(),
			Protocol:    p.Protocol,
			Fallback:    p.Fallback,
			Base:        base,
			BaseDigests: base.Digests(),
			Changes:     p.Changes,
		})
	}
	out.PendingDigest, out.PendingReviewed = r.reviewSet(), r.reviewed()
	if m := r.Reviewed; m != nil {
		out.Reviewed = &Review{Digest: m.Digest, Time: m.Time}
	}
	return out, nil
}

// List summarises every server in the store, in id order. A server whose
// pin cannot be trusted is listed with Tampered set. When the event chain
// itself is broken, List returns an error wrapping ErrTampered.
func (s *Store) List() ([]Summary, error) {
	v, err := s.openChain()
	if err != nil {
		return nil, err
	}
	defer v.close()
	ids, err := v.ids()
	if err != nil {
		return nil, err
	}
	out := make([]Summary, 0, len(ids))
	for _, id := range ids {
		sum := Summary{ID: id}
		r, err := v.record(id)
		var te *TamperError
		switch {
		case errors.As(err, &te):
			sum.Tampered = te.Reason
		case err != nil:
			return nil, err
		case r == nil:
			continue
		default:
			sum.Label, sum.Created, sum.Updated = r.Label, r.Created, r.Updated
			sum.LastSeen = v.lastSeen(id)
			sum.Profiles = len(r.Profiles)
			type kindName struct {
				kind contract.Kind
				name string
			}
			names := map[kindName]bool{}
			for _, p := range r.Profiles {
				for k, refs := range p.Definitions {
					for _, ref := range refs {
						names[kindName{k, ref.Name}] = true
					}
				}
			}
			sum.Definitions = len(names)
			if keys := r.pendingKeys(); len(keys) > 0 {
				sum.DriftPending, sum.Pending = true, r.Pending[keys[0]].Contract
				sum.PendingDigest, sum.PendingProfiles = r.reviewSet(), len(keys)
			}
			sum.AwaitingApproval = len(r.Profiles) == 0
		}
		out = append(out, sum)
	}
	return out, nil
}
