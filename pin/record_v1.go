package pin

import (
	"encoding/json"
	"time"

	"github.com/mcpseal/mcpseal/contract"
)

// A record of version 1, as earlier releases wrote it: one pending change
// for the whole server (a drift under another profile replaced it), a
// review mark naming that change's profile and contract digest, and
// profiles that kept neither the client's capability names nor the
// protocol the server agreed to.
type recordV1 struct {
	Version      int                        `json:"version"`
	ID           string                     `json:"id"`
	Label        string                     `json:"label"`
	Created      time.Time                  `json:"created"`
	Updated      time.Time                  `json:"updated"`
	Profiles     map[string]*profileEntryV1 `json:"profiles"`
	Pending      *pendingEntryV1            `json:"pending"`
	Reviewed     *reviewMarkV1              `json:"reviewed"`
	Definitions  map[string]json.RawMessage `json:"definitions"`
	Instructions map[string]string          `json:"instructions"`
}

type profileEntryV1 struct {
	Pinned time.Time `json:"pinned"`
	contractEntry
}

type pendingEntryV1 struct {
	Profile  string    `json:"profile"`
	Detected time.Time `json:"detected"`
	contractEntry
	Base    contractEntry     `json:"base"`
	Changes []contract.Change `json:"changes"`
}

type reviewMarkV1 struct {
	Profile string    `json:"profile"`
	Digest  string    `json:"digest"`
	Time    time.Time `json:"time"`
}

// upgrade converts a version 1 record to the current form, in memory:
//
//   - a profile keeps nil capabilities and protocol: its capabilities are
//     derived from its key when needed (see declared), and the protocol is
//     recorded the first time a session of that profile names one;
//   - the pending change becomes the pending map's only entry, with nil
//     capabilities and protocol;
//   - the review mark becomes the review-set digest of the one-entry set
//     it named, so it still marks the pending change it marked, and still
//     marks nothing when the pending change had moved since.
//
// The file is not rewritten: the next change writes version 2.
func (v *recordV1) upgrade() *record {
	r := &record{
		Version:      recordVersion,
		ID:           v.ID,
		Label:        v.Label,
		Created:      v.Created,
		Updated:      v.Updated,
		Pending:      map[string]*pendingEntry{},
		Definitions:  v.Definitions,
		Instructions: v.Instructions,
	}
	if v.Profiles != nil {
		r.Profiles = make(map[string]*profileEntry, len(v.Profiles))
		for key, p := range v.Profiles {
			var e *profileEntry
			if p != nil {
				e = &profileEntry{Pinned: p.Pinned, contractEntry: p.contractEntry}
			}
			r.Profiles[key] = e
		}
	}
	if p := v.Pending; p != nil {
		r.Pending[p.Profile] = &pendingEntry{Detected: p.Detected, contractEntry: p.contractEntry, Base: p.Base, Changes: p.Changes}
	}
	if m := v.Reviewed; m != nil {
		r.Reviewed = &reviewMark{Digest: reviewSetDigest([]reviewItem{{Profile: m.Profile, Contract: m.Digest}}), Time: m.Time}
	}
	return r
}
