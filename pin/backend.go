package pin

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// A Backend keeps a Store's records and event chain somewhere other than
// files: the fleet's database (package pgstate). The store's logic — what
// Observe, Approve, Forget and Verify decide, the record format and the
// hash chain — is the same over either; a Backend only keeps bytes, and
// the chain verifies them the same way it verifies events.jsonl and the
// record files. A Backend's faults are never read as absence: an error
// from it makes every operation fail, so the gate holds.
type Backend interface {
	// Begin starts a transaction. An exclusive one is serialised with
	// every other exclusive one, across processes and machines; a shared
	// one reads one consistent snapshot.
	Begin(exclusive bool) (Txn, error)
}

// A Txn is one Backend transaction.
type Txn interface {
	// Events returns the event chain: every event's line, in order, each
	// followed by a newline.
	Events() ([]byte, error)
	// Record returns server id's record, present false when it has none.
	Record(id string) (data []byte, present bool, err error)
	// RecordIDs lists the servers that have a record.
	RecordIDs() ([]string, error)
	// Commit appends event (one line, without its newline) and sets
	// server id's record to data (nil removes it, with its last-seen
	// time), atomically and durably: when it returns nil both are
	// committed, else neither. An exclusive transaction commits at most
	// once.
	Commit(id string, data, event []byte) error
	// Touch records that server id was seen at t; best effort.
	Touch(id string, t time.Time)
	// LastSeen returns server id's last-seen time, zero when unknown.
	LastSeen(id string) time.Time
	// Close ends the transaction; the last-seen times an exclusive one
	// touched and did not commit are committed on a best-effort basis.
	Close()
}

// OpenBackend returns a Store that keeps its state in b. Such a store is
// shared by replicas, so it also holds fleet-wide: a server with a
// pending change is held for every profile and every replica, not only
// for the profile that drifted (see Observe).
func OpenBackend(b Backend) *Store {
	return &Store{db: b, fleet: true}
}

// openDB starts a transaction of the store's backend and reads the chain.
func (s *Store) openDB(exclusive bool) (*view, error) {
	t, err := s.db.Begin(exclusive)
	if err != nil {
		return nil, fmt.Errorf("opening the pin store: %w", err)
	}
	v := &view{s: s, db: t, exclusive: exclusive, ch: emptyChain()}
	data, err := t.Events()
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("reading the event chain: %w", err)
	}
	if len(data) > maxEventsSize {
		v.chainErr = fmt.Errorf("the event chain passes its %d-byte limit", maxEventsSize)
	} else if v.ch, err = parseChain(data); err != nil {
		v.ch, v.chainErr = emptyChain(), err
	}
	// The database always has a chain, empty or not: a record without
	// events is accounted for by none.
	v.ch.exists = true
	if v.ch.torn {
		v.ch, v.chainErr = emptyChain(), errors.New("the event chain holds an event that is not a whole line")
		v.ch.exists = true
	}
	v.trustChain()
	return v, nil
}

// recordDB is record for a backend: no interrupted writes to repair, so
// anything that does not match the chain is tampering.
func (v *view) recordDB(id string) (*record, error) {
	if v.chainErr != nil {
		return nil, tampered(id, v.chainErr.Error())
	}
	data, present, err := v.db.Record(id)
	if err != nil {
		return nil, fmt.Errorf("reading the record of %s: %w", id, err)
	}
	ev, pinned := v.ch.pinned(id)
	switch {
	case !pinned && !present:
		return nil, nil
	case !pinned && ev.Op == opForget:
		return nil, tampered(id, "a record exists for a forgotten server")
	case !pinned:
		return nil, tampered(id, "a record exists that no event accounts for")
	case !present:
		return nil, tampered(id, "the record is missing")
	case len(data) > maxRecordSize:
		return nil, tampered(id, "the record passes its size limit")
	case fileHash(data) != *ev.Record:
		return nil, tampered(id, "the record does not match the event chain")
	}
	r, err := decodeRecord(id, data)
	if err != nil {
		return nil, tampered(id, err.Error())
	}
	return r, nil
}

// maxByLen bounds who approved a change, as recorded in the chain.
const maxByLen = 128

// checkBy refuses a --by value that is not one short line of printable
// text: it is written into the chain and shown by review commands.
func checkBy(by string) error {
	if len(by) > maxByLen || !utf8.ValidString(by) || strings.TrimSpace(by) != by {
		return errors.New("pin: the approver must be at most 128 bytes of printable text without surrounding spaces")
	}
	for _, r := range by {
		if !unicode.IsPrint(r) {
			return errors.New("pin: the approver must be printable text")
		}
	}
	return nil
}

// A Watcher is a Backend that others change too and that knows, without
// I/O, when server id's state may have changed: see Store.Generation.
type Watcher interface {
	Generation(id string) uint64
}

// Generation returns a number that moves whenever server id's pin state
// may have changed elsewhere (gate.PinWatcher): the backend's, when it is
// a Watcher; 0, always, for the file store, whose changes are this
// machine's own.
func (s *Store) Generation(id string) uint64 {
	if w, ok := s.db.(Watcher); ok {
		return w.Generation(id)
	}
	return 0
}
