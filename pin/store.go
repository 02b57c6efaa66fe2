package pin

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// A Store is the pin store under one home folder. It is safe for
// concurrent use by goroutines and processes: every operation takes the
// store's file lock.
type Store struct {
	dir string  // home/pins; "" for a backend's store
	db  Backend // nil for the file store
	// fleet holds a server with a pending change on every profile (see
	// OpenBackend).
	fleet bool
	// high is the furthest point of the chain this handle has seen.
	high highWater
	// pre is the record Prefetch read ahead of the next Observe.
	pre prefetchSlot
}

// DefaultHome returns mcpseal's home folder: $MCPSEAL_HOME when set (it
// must be absolute, so that every client that starts mcpseal, from
// whatever folder, shares one store), else ~/.mcpseal.
func DefaultHome(getenv func(string) string) (string, error) {
	if h := getenv("MCPSEAL_HOME"); h != "" {
		if !filepath.IsAbs(h) {
			return "", errors.New("MCPSEAL_HOME must be an absolute path")
		}
		return filepath.Clean(h), nil
	}
	home := getenv("HOME")
	if home == "" && runtime.GOOS == "windows" {
		home = getenv("USERPROFILE")
	}
	if home == "" || !filepath.IsAbs(home) {
		return "", errors.New("cannot find the home folder; set MCPSEAL_HOME")
	}
	return filepath.Join(home, ".mcpseal"), nil
}

// Open opens the store under home, creating home/pins (0700) if needed. It
// refuses a pins folder that other users may write to, and (with an error
// wrapping ErrTampered) a pins or pins/seen folder that is a symbolic link
// or not a folder. home itself may be a link: it is the person's choice,
// made where they set $MCPSEAL_HOME; the folders under it are mcpseal's,
// and a link there would move the pins, and their writes, wherever it
// points.
func Open(home string) (*Store, error) {
	if !filepath.IsAbs(home) {
		return nil, errors.New("the pin store's home must be an absolute path")
	}
	dir := filepath.Join(home, "pins")
	folders := []string{dir, filepath.Join(dir, "seen")}
	// Anything but a folder (or nothing) where a folder belongs is
	// tampering, said as such before MkdirAll fails on it with a plain
	// "not a directory".
	for _, d := range folders {
		if fi, err := os.Lstat(d); err == nil && !fi.IsDir() {
			return nil, tampered("", fmt.Sprintf("%s is %s, not a folder", d, atomicfile.Kind(fi.Mode())))
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "seen"), 0o700); err != nil {
		return nil, fmt.Errorf("creating the pin store: %w", err)
	}
	for _, d := range folders {
		fi, err := os.Lstat(d)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, tampered("", fmt.Sprintf("%s is %s, not a folder", d, atomicfile.Kind(fi.Mode())))
		}
		if runtime.GOOS != "windows" && fi.Mode().Perm()&0o022 != 0 {
			return nil, fmt.Errorf("%s is writable by other users; run chmod 700 on it", d)
		}
	}
	return &Store{dir: dir}, nil
}

// Dir returns the folder that holds the store's files, "" for a store
// kept in a Backend.
func (s *Store) Dir() string { return s.dir }

func (s *Store) recordPath(id string) string { return filepath.Join(s.dir, id+".json") }
func (s *Store) newPath(id string) string    { return filepath.Join(s.dir, id+".json.new") }
func (s *Store) seenPath(id string) string   { return filepath.Join(s.dir, "seen", id) }
func (s *Store) eventsPath() string          { return filepath.Join(s.dir, "events.jsonl") }

// view is the store as read under its lock.
type view struct {
	s         *Store
	lock      *os.File
	exclusive bool
	ch        *chain
	// db is the backend's transaction; nil for the file store.
	db Txn
	// chainErr is why the event chain cannot be trusted; every server is
	// then tampered.
	chainErr error
}

// open takes the store's lock and reads the event chain.
func (s *Store) open(exclusive bool) (*view, error) {
	if s.db != nil {
		return s.openDB(exclusive)
	}
	f, err := s.lock(exclusive)
	if err != nil {
		return nil, err
	}
	v := &view{s: s, lock: f, exclusive: exclusive, ch: emptyChain()}
	data, err := atomicfile.ReadFile(s.eventsPath(), maxEventsSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		v.chainErr = fmt.Errorf("events.jsonl cannot be read: %v", err)
	default:
		if v.ch, err = parseChain(data); err != nil {
			v.ch, v.chainErr = emptyChain(), err
		}
	}
	v.trustChain()
	return v, nil
}

// lock takes the store's lock (exclusive for writers, shared for
// readers) and returns the lock file: closing it releases the lock.
func (s *Store) lock(exclusive bool) (*os.File, error) {
	// A FIFO, folder or link in place of the lock file is refused, not
	// waited on: the store's lock must be the store's own file.
	f, err := atomicfile.OpenFile(filepath.Join(s.dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		return nil, tampered("", "the lock file: "+err.Error())
	}
	if err != nil {
		return nil, fmt.Errorf("opening the pin store lock: %w", err)
	}
	if err := lockFile(f, exclusive); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the pin store: %w", err)
	}
	return f, nil
}

// openChain opens the store for reading and refuses a broken chain (an
// error wrapping ErrTampered): for what needs the whole chain.
func (s *Store) openChain() (*view, error) {
	v, err := s.open(false)
	if err != nil {
		return nil, err
	}
	if v.chainErr != nil {
		v.close()
		return nil, tampered("", v.chainErr.Error())
	}
	return v, nil
}

func (v *view) close() {
	if v.db != nil {
		v.db.Close()
		return
	}
	v.lock.Close()
}

func fileHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func tampered(id, reason string) error { return &TamperError{ID: id, Reason: reason} }

// record returns the verified record of server id, nil if it has no pin.
func (v *view) record(id string) (*record, error) {
	if v.db != nil {
		return v.recordDB(id)
	}
	if v.chainErr != nil {
		return nil, tampered(id, v.chainErr.Error())
	}
	data, err := atomicfile.ReadFile(v.s.recordPath(id), maxRecordSize)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return nil, tampered(id, "the record file cannot be read: "+err.Error())
	}
	if reason := v.s.strayFile(id); reason != "" {
		return nil, tampered(id, reason)
	}
	ev, pinned := v.ch.pinned(id)
	if !pinned {
		switch {
		case missing:
			return nil, nil
		case !v.ch.exists:
			return nil, tampered(id, "a record file exists but events.jsonl is missing")
		case ev.Op == opForget && equalDigest(v.ch.before[id], ptr(fileHash(data))):
			// A forget whose removal was interrupted.
			if v.exclusive {
				if err := os.Remove(v.s.recordPath(id)); err != nil {
					return nil, err
				}
				if err := syncDir(v.s.dir); err != nil {
					return nil, err
				}
			}
			return nil, nil
		case ev.Op == opForget:
			return nil, tampered(id, "a record file exists for a forgotten server")
		}
		return nil, tampered(id, "a record file exists that no event accounts for")
	}
	want := *ev.Record
	if missing || fileHash(data) != want {
		nd, nerr := atomicfile.ReadFile(v.s.newPath(id), maxRecordSize)
		switch {
		case nerr == nil && fileHash(nd) == want:
			// A commit interrupted after its event: roll it forward.
			if v.exclusive {
				if err := os.Rename(v.s.newPath(id), v.s.recordPath(id)); err != nil {
					return nil, err
				}
				if err := syncDir(v.s.dir); err != nil {
					return nil, err
				}
			}
			data = nd
		case missing:
			return nil, tampered(id, "the record file is missing")
		default:
			return nil, tampered(id, "the record file does not match the event chain")
		}
	}
	r, err := decodeRecord(id, data)
	if err != nil {
		return nil, tampered(id, err.Error())
	}
	return r, nil
}

// recordKnowing is record, with each definition of the record whose bytes
// are those of known's raw message under its digest given known's raw
// message rather than a copy. Observe passes the observed contract's
// texts: a session that lists what is pinned then holds its definitions
// once, not once listed and once more as the record read them.
//
// The record file is read a member at a time (streamRecord). Whatever that
// does not accept as it stands (a file the chain does not name, a stray
// file, an earlier format, anything that does not decode or check) is left
// to record, which reads it whole and judges it as always.
func (v *view) recordKnowing(id string, known map[string]json.RawMessage) (*record, error) {
	if v.db == nil && v.chainErr == nil {
		if r := v.takePrefetched(id, known); r != nil {
			return r, nil
		}
		if r := v.streamRecord(id, known); r != nil {
			return r, nil
		}
	}
	return v.record(id)
}

// streamRecord returns server id's record when its record file is exactly
// the one the event chain names (its hash, taken of the bytes as they are
// decoded), decodes as a version 2 record and checks; nil otherwise.
func (v *view) streamRecord(id string, known map[string]json.RawMessage) *record {
	ev, pinned := v.ch.pinned(id)
	if !pinned || ev.Record == nil || v.s.strayFile(id) != "" {
		return nil
	}
	f, err := atomicfile.Open(v.s.recordPath(id))
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > maxRecordSize {
		return nil
	}
	h := sha256.New()
	src := io.TeeReader(io.LimitReader(f, maxRecordSize+1), h)
	r, err := readBack(id, bufio.NewReaderSize(src, 64<<10), known)
	if err != nil || hex.EncodeToString(h.Sum(nil)) != *ev.Record {
		return nil
	}
	return r
}

// strayFile returns why server id's other files (its interrupted commit's
// .new file and its last-seen file) make the store suspect, "" when they
// are absent or regular files. Neither is trusted for its contents (the
// chain decides), but a FIFO, folder or link in their place is someone's
// doing: a write would be blocked or redirected through it.
func (s *Store) strayFile(id string) string {
	for _, p := range []string{s.newPath(id), s.seenPath(id)} {
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			rel, _ := filepath.Rel(s.dir, p)
			return fmt.Sprintf("%s is %s, not a regular file", filepath.ToSlash(rel), atomicfile.Kind(fi.Mode()))
		}
	}
	return ""
}

func ptr[T any](v T) *T { return &v }

// ids returns every server the store knows of: pinned in the chain or with
// a record file, sorted.
func (v *view) ids() ([]string, error) {
	set := map[string]bool{}
	for id := range v.ch.latest {
		if _, ok := v.ch.pinned(id); ok {
			set[id] = true
		}
	}
	if v.db != nil {
		rows, err := v.db.RecordIDs()
		if err != nil {
			return nil, err
		}
		for _, id := range rows {
			if !isID(id) {
				return nil, tampered("", "a record is kept under an invalid server id")
			}
			set[id] = true
		}
	} else {
		entries, err := os.ReadDir(v.s.dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && isID(id) {
				set[id] = true
			}
		}
	}
	ids := make([]string, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// resolve turns an id or a unique label into an id.
func (v *view) resolve(ref string) (string, error) {
	if isID(ref) {
		return ref, nil
	}
	if v.chainErr != nil {
		return "", tampered("", v.chainErr.Error())
	}
	ids, err := v.ids()
	if err != nil {
		return "", err
	}
	var matches []string
	for _, id := range ids {
		if r, err := v.record(id); err == nil && r != nil && r.Label == ref {
			matches = append(matches, id)
		}
	}
	switch len(matches) {
	case 0:
		return "", ErrNotFound
	case 1:
		return matches[0], nil
	}
	return "", fmt.Errorf("that label names %d servers (%s); name one by id", len(matches), strings.Join(matches, ", "))
}

// commit writes r as server id's record (nil removes it) and appends its
// event, in the order the package doc's Commit section gives.
func (v *view) commit(op, id string, r *record, now time.Time) error {
	return v.commitBy(op, id, r, now, "")
}

// commitBy is commit with the event naming who made the change.
func (v *view) commitBy(op, id string, r *record, now time.Time, by string) error {
	if !v.exclusive {
		return errors.New("pin store: commit without the exclusive lock")
	}
	var (
		digest *string
		data   []byte
	)
	switch {
	case r != nil && v.db == nil:
		// Written to its .new file and read back from there (see
		// writeRecordFile); the event below makes it the record.
		d, err := writeRecordFile(v.s.newPath(id), id, r)
		if err != nil {
			return err
		}
		digest = &d
	case r != nil:
		var err error
		if data, err = encodeRecord(r); err != nil {
			return err
		}
		if len(data) > maxRecordSize {
			return fmt.Errorf("the record would pass its %d-byte limit", maxRecordSize)
		}
		// Nothing is persisted that would not read back the same.
		if _, err := decodeRecord(id, data); err != nil {
			return fmt.Errorf("the contract cannot be stored faithfully: %v", err)
		}
		digest = ptr(fileHash(data))
	}
	e := v.ch.next(op, id, digest, now)
	e.By = by
	line, err := e.encode()
	if err != nil {
		return err
	}
	if v.db != nil {
		if err := v.db.Commit(id, data, line); err != nil {
			return fmt.Errorf("committing to the pin store: %w", err)
		}
		v.ch.add(e, lineHash(line))
		v.remember()
		return nil
	}
	if err := v.appendEvent(append(line, '\n')); err != nil {
		return fileError("", err)
	}
	v.ch.add(e, lineHash(line))
	v.remember()
	if r != nil {
		if err := os.Rename(v.s.newPath(id), v.s.recordPath(id)); err != nil {
			return err
		}
	} else {
		if err := removeIfExists(v.s.recordPath(id)); err != nil {
			return err
		}
		if err := removeIfExists(v.s.newPath(id)); err != nil {
			return err
		}
	}
	return syncDir(v.s.dir)
}

// appendEvent appends one line to events.jsonl and fsyncs it, first
// cutting off an interrupted append.
func (v *view) appendEvent(line []byte) error {
	if v.ch.size+int64(len(line)) > maxEventsSize {
		return fmt.Errorf("events.jsonl would pass its %d-byte limit", maxEventsSize)
	}
	f, err := atomicfile.OpenFile(v.s.eventsPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if v.ch.torn {
		if err := f.Truncate(v.ch.size); err != nil {
			f.Close()
			return err
		}
		v.ch.torn = false
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	v.ch.size += int64(len(line))
	if !v.ch.exists {
		v.ch.exists = true
		return syncDir(v.s.dir)
	}
	return nil
}

// fileError makes a write that found a special file in place of one of
// the store's files a tampered store.
func fileError(id string, err error) error {
	if errors.Is(err, atomicfile.ErrNotRegular) {
		return tampered(id, err.Error())
	}
	return err
}

// touch records that server id was seen at now. Last-seen times are not
// security relevant; a failure to write one is ignored. Nor are they
// durable: the file is replaced atomically but not fsynced (every session
// writes one before its first listing is released, and the two fsyncs
// were most of the pin check's time). After a crash it may be the older
// time, or empty or partial, which lastSeen reads as unknown.
func (v *view) touch(id string, now time.Time) {
	if v.db != nil {
		v.db.Touch(id, now.UTC())
		return
	}
	_ = atomicfile.WriteFileUnsynced(v.s.seenPath(id), seenLine(now), 0o600)
}

// seenLine is a last-seen file's contents.
func seenLine(t time.Time) []byte { return []byte(t.UTC().Format(time.RFC3339Nano) + "\n") }

// lastSeen reads server id's last-seen time; zero when unknown.
func (v *view) lastSeen(id string) time.Time {
	if v.db != nil {
		return v.db.LastSeen(id)
	}
	data, err := atomicfile.ReadFile(v.s.seenPath(id), maxSeenSize)
	if err != nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
	if err != nil {
		return time.Time{}
	}
	return t
}
