package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// SequenceFormat is the sequence store's format tag.
const SequenceFormat = "mcpseal-lock-sequences/1"

// maxSequenceStore bounds the store: one small entry per lock a host has
// seen.
const maxSequenceStore = 16 << 20

// sequenceStore is the host's record of the highest manifest accepted for
// each lock, keyed by the lock's absolute, resolved path:
//
//	{"format": "mcpseal-lock-sequences/1",
//	 "locks": {"/home/me/app/mcpseal.lock": {"sequence": 7, "lock_digest": "sha256:..."}}}
type sequenceStore struct {
	Format string              `json:"format"`
	Locks  map[string]seenLock `json:"locks"`
}

type seenLock struct {
	Sequence   uint64 `json:"sequence"`
	LockDigest string `json:"lock_digest"`
}

// acceptSequence checks manifest m of the lock at key against the store
// at path and, when it is newer, records it. It holds an exclusive lock
// on path+".flock" throughout, so processes starting servers at the same
// time cannot lose each other's updates. An equal sequence is accepted
// only for the same lock digest. The store and its .flock are the host's
// state: a FIFO or a link in their place is refused, never waited on or
// followed.
func acceptSequence(path, key string, m *Manifest) error {
	f, err := atomicfile.OpenFile(path+".flock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("lock: sequence store: %w", err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return fmt.Errorf("lock: sequence store: %w", err)
	}
	st := sequenceStore{Format: SequenceFormat, Locks: map[string]seenLock{}}
	data, err := atomicfile.ReadFile(path, maxSequenceStore)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("lock: sequence store: %w", err)
	default:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&st); err != nil || st.Format != SequenceFormat || st.Locks == nil {
			return fmt.Errorf("lock: sequence store %s is damaged; refusing rather than forgetting what this host has seen", path)
		}
	}
	seen, ok := st.Locks[key]
	if record, err := JudgeSequence(seen.Sequence, seen.LockDigest, ok, m.Sequence, m.LockDigest); !record || err != nil {
		return err
	}
	st.Locks[key] = seenLock{Sequence: m.Sequence, LockDigest: m.LockDigest}
	out, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(path, append(out, '\n'), 0o600); err != nil {
		return fmt.Errorf("lock: sequence store: %w", err)
	}
	return nil
}

// A SequenceStore records, for each lock (keyed by its absolute,
// resolved path), the highest signed manifest the host accepted: the file
// a host config names (FileSequences), or a fleet's database (pgstate),
// so that every replica refuses a rollback any of them would.
type SequenceStore interface {
	// Accept checks a manifest's sequence and lock digest against what
	// was accepted for key (ErrRollback when older, or equal for another
	// lock) and records it when newer, atomically.
	Accept(key string, sequence uint64, lockDigest string) error
}

// FileSequences is the sequence store kept in one file (HostConfig's
// sequence_store).
type FileSequences string

// Accept implements SequenceStore.
func (p FileSequences) Accept(key string, sequence uint64, lockDigest string) error {
	return acceptSequence(string(p), key, &Manifest{Sequence: sequence, LockDigest: lockDigest})
}

// JudgeSequence is every SequenceStore's rule: given what was accepted
// for a lock (known false when nothing), it says whether a manifest of
// sequence and lockDigest is to be recorded, or refused (ErrRollback).
// An equal sequence is accepted, without recording, only for the same
// lock digest.
func JudgeSequence(seenSeq uint64, seenDigest string, known bool, sequence uint64, lockDigest string) (record bool, err error) {
	switch {
	case !known || sequence > seenSeq:
		return true, nil
	case sequence == seenSeq && lockDigest == seenDigest:
		return false, nil
	case sequence == seenSeq:
		return false, fmt.Errorf("%w: sequence %d was already seen for another lock", ErrRollback, sequence)
	}
	return false, fmt.Errorf("%w: sequence %d, this host has seen %d", ErrRollback, sequence, seenSeq)
}

// sequenceKey is the store's key for the lock at path.
func sequenceKey(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}
