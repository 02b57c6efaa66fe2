package pin

import (
	"github.com/mcpseal/mcpseal/contract"

	"encoding/json"

	"github.com/mcpseal/mcpseal/canon"
)

// The review set: a server's pending changes, one per profile, reviewed
// and approved together and named by the review-set digest defined in the
// package doc's Review section.

// reviewItem is one pending profile in a review set.
type reviewItem struct {
	Contract string  `json:"contract"`
	Fallback bool    `json:"fallback"`
	Profile  string  `json:"profile"`
	Protocol *string `json:"protocol"`
}

// reviewSetDigest returns the review-set digest of items, which must be in
// profile-key order.
func reviewSetDigest(items []reviewItem) string {
	if items == nil {
		items = []reviewItem{}
	}
	raw, err := json.Marshal(struct {
		Pending []reviewItem `json:"pending"`
		Type    string       `json:"type"`
		Version int          `json:"version"`
	}{items, "mcpseal-review-set", 1})
	if err != nil {
		panic(err) // strings and bools only
	}
	d, err := canon.Digest(raw)
	if err != nil {
		// json.Marshal writes valid JSON, and every string in it is
		// valid UTF-8 (profile keys are escaped, protocols normalised).
		panic(err)
	}
	return d
}

// reviewSet returns the review-set digest of r's pending changes; "" when
// nothing is pending.
func (r *record) reviewSet() string {
	if len(r.Pending) == 0 {
		return ""
	}
	items := make([]reviewItem, 0, len(r.Pending))
	for _, key := range r.pendingKeys() {
		p := r.Pending[key]
		items = append(items, reviewItem{Contract: p.Contract, Fallback: p.Fallback, Profile: key, Protocol: p.Protocol})
	}
	return reviewSetDigest(items)
}

// reviewed reports whether the pending set carries the review mark.
func (r *record) reviewed() bool {
	return len(r.Pending) > 0 && r.Reviewed != nil && r.Reviewed.Digest == r.reviewSet()
}

// names reports whether digest names r's pending set: its review-set
// digest, or, when exactly one profile is pending, that change's contract
// digest (what earlier releases' review and approve took).
func (r *record) names(digest string) bool {
	if len(r.Pending) == 0 {
		return false
	}
	if digest == r.reviewSet() {
		return true
	}
	if len(r.Pending) == 1 {
		// The alias earlier releases used: the contract digest covers
		// neither the protocol nor the fallback flag, so it names only a
		// change that has neither.
		for _, p := range r.Pending {
			return p.Contract == digest && !p.Fallback && !hasProtocolChange(p.Changes)
		}
	}
	return false
}

func hasProtocolChange(changes []contract.Change) bool {
	for _, ch := range changes {
		if ch.Kind == contract.ProtocolKind {
			return true
		}
	}
	return false
}
