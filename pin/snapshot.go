package pin

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"

	"slices"
	"time"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// A Snapshot is a pin store's whole state as stored: the event chain's
// bytes, every record's bytes and the last-seen times. It moves a store
// between the files and a Backend (`mcpseal state export|import`) without
// re-encoding anything, so the chain verifies the same on the other side.
type Snapshot struct {
	// Events is the chain: every event's line followed by a newline.
	Events []byte
	// Records holds each pinned server's record, by id.
	Records map[string][]byte
	// Seen holds last-seen times, by id.
	Seen map[string]time.Time
}

// IDs returns the snapshot's server ids, sorted.
func (s *Snapshot) IDs() []string {
	ids := make([]string, 0, len(s.Records))
	for id := range s.Records {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Snapshot reads the store's state under its lock. A store that does not
// verify cleanly (a fault, or an interrupted write not yet repaired) is
// refused: nothing unverified is copied.
func (s *Store) Snapshot() (*Snapshot, error) {
	rep, err := s.Verify()
	if err != nil {
		return nil, err
	}
	if !rep.OK() || len(rep.Notes) > 0 {
		return nil, errors.New("pin: the store does not verify cleanly; run 'mcpseal verify' and repair it first")
	}
	v, err := s.openChain()
	if err != nil {
		return nil, err
	}
	defer v.close()
	snap := &Snapshot{Records: map[string][]byte{}, Seen: map[string]time.Time{}}
	if v.db != nil {
		if snap.Events, err = v.db.Events(); err != nil {
			return nil, err
		}
	} else {
		data, err := atomicfile.ReadFile(s.eventsPath(), maxEventsSize)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		snap.Events = data[:v.ch.size]
	}
	ids, err := v.ids()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		ev, pinned := v.ch.pinned(id)
		if !pinned {
			continue
		}
		var data []byte
		if v.db != nil {
			data, _, err = v.db.Record(id)
		} else {
			data, err = atomicfile.ReadFile(s.recordPath(id), maxRecordSize)
		}
		if err != nil {
			return nil, err
		}
		if fileHash(data) != *ev.Record {
			return nil, tampered(id, "the record changed while it was copied")
		}
		snap.Records[id] = data
		if t := v.lastSeen(id); !t.IsZero() {
			snap.Seen[id] = t
		}
	}
	// What is copied must verify on its own.
	if err := snap.Check(); err != nil {
		return nil, err
	}
	return snap, nil
}

// Check verifies a snapshot as a store would: the chain, and every record
// against it, with no record that no event accounts for.
func (s *Snapshot) Check() error {
	ch, err := parseChain(s.Events)
	if err != nil {
		return tampered("", err.Error())
	}
	if ch.torn {
		return tampered("", "the event chain ends in an incomplete line")
	}
	for id, data := range s.Records {
		ev, pinned := ch.pinned(id)
		if !isID(id) || !pinned || fileHash(data) != *ev.Record {
			return tampered(id, "the record does not match the event chain")
		}
		if _, err := decodeRecord(id, data); err != nil {
			return tampered(id, err.Error())
		}
	}
	for id := range ch.latest {
		if _, pinned := ch.pinned(id); pinned && s.Records[id] == nil {
			return tampered(id, "the record is missing")
		}
	}
	return nil
}

// Restore writes snap as the pin store under home, which must have none
// yet (no events.jsonl, no record), and returns the store. The copy is
// verified before and after.
func Restore(home string, snap *Snapshot) (*Store, error) {
	if err := snap.Check(); err != nil {
		return nil, err
	}
	st, err := Open(home)
	if err != nil {
		return nil, err
	}
	v, err := st.open(true)
	if err != nil {
		return nil, err
	}
	defer v.close()
	if v.ch.exists || v.chainErr != nil {
		return nil, fmt.Errorf("pin: %s already holds a pin store", st.dir)
	}
	if ids, err := v.ids(); err != nil || len(ids) > 0 {
		return nil, fmt.Errorf("pin: %s already holds pin records", st.dir)
	}
	// Records first, then the chain that accounts for them: an
	// interrupted restore leaves records no event accounts for, which
	// the store refuses, never a chain without its records.
	for _, id := range snap.IDs() {
		if err := writeSynced(st.recordPath(id), snap.Records[id]); err != nil {
			return nil, err
		}
	}
	for id, t := range snap.Seen {
		if snap.Records[id] != nil {
			// Written once, by a command that says the copy is done: made
			// durable, unlike a session's (touch). A failure is ignored,
			// as touch ignores it.
			_ = atomicfile.WriteFile(st.seenPath(id), seenLine(t), 0o600)
		}
	}
	if err := writeSynced(st.eventsPath(), bytes.Clone(snap.Events)); err != nil {
		return nil, err
	}
	if err := syncDir(st.dir); err != nil {
		return nil, err
	}
	return st, nil
}
