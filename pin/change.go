package pin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// pendingRecord opens the store for writing and returns the verified
// record of the server ref names, which must have a pending change whose
// digest is digest. The caller closes the view.
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
		case r.Pending == nil:
			return nil, ErrNoPending
		case r.Pending.Contract != digest:
			return nil, fmt.Errorf("%w: the pending contract is now %s", ErrPendingMoved, r.Pending.Contract)
		}
		return r, nil
	}()
	if err != nil {
		v.close()
		return nil, nil, err
	}
	return v, r, nil
}

// MarkReviewed marks the pending change of the server ref names (an id or a
// unique label) as reviewed, provided its contract digest is still
// pendingDigest (else ErrPendingMoved). Marking it again does nothing.
func (s *Store) MarkReviewed(ref, pendingDigest string) error {
	v, r, err := s.pendingRecord(ref, pendingDigest)
	if err != nil {
		return err
	}
	defer v.close()
	if r.reviewed() {
		return nil
	}
	now := time.Now().UTC()
	r.Reviewed = &reviewMark{Profile: r.Pending.Profile, Digest: r.Pending.Contract, Time: now}
	r.Updated = now
	return v.commit(opReview, r.ID, r, now)
}

// Approve pins exactly the pending change of the server ref names for the
// pending change's profile, provided its contract digest is still
// reviewedDigest (else ErrPendingMoved), and clears it. For a server
// awaiting its first approval this is its first pin.
func (s *Store) Approve(ref, reviewedDigest string, now time.Time) error {
	v, r, err := s.pendingRecord(ref, reviewedDigest)
	if err != nil {
		return err
	}
	defer v.close()
	now = now.UTC()
	t := r.texts()
	p := r.Pending
	r.Profiles[p.Profile] = &profileEntry{Pinned: now, contractEntry: p.contractEntry}
	r.Pending, r.Reviewed = nil, nil
	r.Updated = now
	r.keepTexts(t)
	return v.commit(opApprove, r.ID, r, now)
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
	if !pinned {
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
	return removeIfExists(v.s.seenPath(id))
}
