package pin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// pendingRecord opens the store for writing and returns the verified
// record of the server ref names, whose pending set digest must name (see
// record.names). The caller closes the view.
func (s *Store) pendingRecord(ref, digest string) (*view, *record, error) {
	v, err := s.open(true)
	if err != nil {
		return nil, nil, err
	}
	r, err := func() (*record, error) {
		id, err := v.resolve(ref)
		if err != nil {
			return nil, err
		}
		r, err := v.record(id)
		switch {
		case err != nil:
			return nil, err
		case r == nil:
			return nil, ErrNotFound
		case len(r.Pending) == 0:
			return nil, ErrNoPending
		case !r.names(digest):
			return nil, fmt.Errorf("%w: the pending set is now %s", ErrPendingMoved, r.reviewSet())
		}
		return r, nil
	}()
	if err != nil {
		v.close()
		return nil, nil, err
	}
	return v, r, nil
}

// MarkReviewed marks the pending set of the server ref names (an id or a
// unique label) as reviewed: every pending profile's change at once,
// provided digest still names that set (its review-set digest, or the
// contract digest of the only pending profile; else ErrPendingMoved).
// Marking it again does nothing.
func (s *Store) MarkReviewed(ref, digest string) error {
	v, r, err := s.pendingRecord(ref, digest)
	if err != nil {
		return err
	}
	defer v.close()
	if r.reviewed() {
		return nil
	}
	now := time.Now().UTC()
	r.Reviewed = &reviewMark{Digest: r.reviewSet(), Time: now}
	r.Updated = now
	return v.commit(opReview, r.ID, r, now)
}

// Approve pins exactly the pending set of the server ref names, provided
// digest still names it (as for MarkReviewed; else ErrPendingMoved): every
// pending profile's contract, with its capabilities and protocol, becomes
// that profile's pin, and a fallback the change held becomes allowed for
// the profile. The pending set and the review mark are cleared. For a
// server awaiting its first approval this is its first pin.
func (s *Store) Approve(ref, digest string, now time.Time) error {
	return s.ApproveBy(ref, digest, "", now)
}

// ApproveBy is Approve with the approve event naming who approved: by is
// at most 128 bytes of printable text ("" names nobody).
func (s *Store) ApproveBy(ref, digest, by string, now time.Time) error {
	if err := checkBy(by); err != nil {
		return err
	}
	v, r, err := s.pendingRecord(ref, digest)
	if err != nil {
		return err
	}
	defer v.close()
	now = now.UTC()
	t := r.texts()
	for _, key := range r.pendingKeys() {
		p := r.Pending[key]
		facts := p.sessionFacts
		origin := originApprove
		if prev := r.Profiles[key]; prev != nil {
			if facts.Capabilities == nil {
				facts.Capabilities = prev.Capabilities
			}
			if facts.Protocol == nil {
				facts.Protocol = prev.Protocol
			}
			facts.Fallback = facts.Fallback || prev.Fallback
			if prev.Origin != "" {
				// A changed first pin stays the baseline it was.
				origin = prev.Origin
			}
		}
		r.Profiles[key] = &profileEntry{Pinned: now, Origin: origin, contractEntry: p.contractEntry, sessionFacts: facts}
	}
	r.Pending, r.Reviewed = map[string]*pendingEntry{}, nil
	r.Updated = now
	r.keepTexts(t)
	return v.commitBy(opApprove, r.ID, r, now, by)
}

// Forget removes the server ref names (an id, or a unique label of an
// intact record) from the store, so that its next session starts afresh:
// under guard and monitor it pins whatever the server serves then, under
// strict it records that as a first contract awaiting approval. It also clears a tampered server's pin: that is the way to
// re-trust one deliberately. It needs an intact event chain.
func (s *Store) Forget(ref string, now time.Time) error {
	v, err := s.open(true)
	if err != nil {
		return err
	}
	defer v.close()
	if v.chainErr != nil {
		return tampered("", v.chainErr.Error())
	}
	id, err := v.resolve(ref)
	if err != nil {
		return err
	}
	_, pinned := v.ch.pinned(id)
	if !pinned && v.db != nil {
		_, present, err := v.db.Record(id)
		if err != nil {
			return err
		}
		if !present {
			return ErrNotFound
		}
	} else if !pinned {
		_, err := os.Lstat(v.s.recordPath(id))
		if errors.Is(err, fs.ErrNotExist) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
	}
	if err := v.commit(opForget, id, nil, now.UTC()); err != nil {
		return err
	}
	if v.db != nil {
		return nil
	}
	return removeIfExists(v.s.seenPath(id))
}
