package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// Options configure a Log. Zero fields take the defaults.
type Options struct {
	// MaxFileBytes is the size at which current.jsonl is rotated.
	MaxFileBytes int64
	// MaxFiles is how many rotated files are kept.
	MaxFiles int
	// Sync fsyncs the file after every append. Without it an event is
	// written with one write(2) before Append returns, so a crash of
	// mcpseal loses nothing, but a crash of the machine may lose the
	// last events; rotation always syncs.
	Sync bool
	// Now is the clock for events without a time. Default: time.Now.
	Now func() time.Time
}

// Defaults: 8 MiB files, 8 rotated files kept (72 MiB, about 300,000
// events at 250 bytes each).
const (
	DefaultMaxFileBytes = 8 << 20
	DefaultMaxFiles     = 8
)

// File names under the audit folder.
const (
	currentName = "current.jsonl"
	headName    = "head"
	lockName    = ".lock"
)

// Dir returns the audit folder under mcpseal's home.
func Dir(home string) string { return filepath.Join(home, "audit") }

// A Log appends events to the audit log under one home folder. It is safe
// for concurrent use by goroutines and processes.
type Log struct {
	dir  string
	opts Options
	mu   sync.Mutex
	lock *os.File
	// last is the tip after this Log's latest append and the file it
	// was written to. When current.jsonl is still that file at that size,
	// no other process appended since and the tip need not be read again.
	last     *tip
	lastFile os.FileInfo
	// line is a buffer for encoding one event, reused under mu.
	line []byte
	// batch is AppendAll's buffer, kept between batches (under mu), and
	// prepared the events it is writing.
	batch    []byte
	prepared []Event
	// seen is what prepare and the encoder checked last, under mu.
	seen seen
}

// Open opens (creating it if needed) the audit log under home. It refuses
// an audit folder that other users may write to.
func Open(home string, o Options) (*Log, error) {
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	dir, err := ensureDir(home)
	if err != nil {
		return nil, err
	}
	lock, err := atomicfile.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the audit log: %w", err)
	}
	return &Log{dir: dir, opts: o, lock: lock}, nil
}

func ensureDir(home string) (string, error) {
	if !filepath.IsAbs(home) {
		return "", errors.New("the audit log's home must be an absolute path")
	}
	dir := Dir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating the audit log: %w", err)
	}
	// The audit folder is mcpseal's: a link in its place would send the
	// log wherever it points. home itself may be a link (see pin.Open).
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder (a symbolic link or a special file); the audit log is not written through it", dir)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("%s is writable by other users; run chmod 700 on it", dir)
	}
	return dir, nil
}

// Close releases the log.
func (l *Log) Close() error { return l.lock.Close() }

// Append writes one event. It fills in V, Seq, Prev and (when zero) Time,
// and reduces the text fields (see the package doc). It fails with
// ErrInvalidEvent for an event it will not write, and with an I/O error
// when the log cannot be written; a caller that must fail closed refuses
// the operation the event records.
func (l *Log) Append(e Event) error { return l.AppendAll([]Event{e}) }

// AppendAll writes events in order, as Append would one by one, under one
// lock and with one head update: a busy gate hands its events over in
// batches. Nothing is written when one of them is invalid.
func (l *Log) AppendAll(es []Event) error {
	if len(es) == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Each event is checked and reduced once, here, before anything is
	// written; writeTo only chains it.
	ps := l.prepared[:0]
	defer func() {
		clear(ps) // no event's strings kept alive between batches (but the few in l.seen)
		if cap(ps) <= maxKeptEvents {
			l.prepared = ps[:0]
		}
	}()
	for _, e := range es {
		p, err := l.prepare(e)
		if err != nil {
			return err
		}
		ps = append(ps, p)
	}
	if err := lockFile(l.lock, true); err != nil {
		return fmt.Errorf("locking the audit log: %w", err)
	}
	defer unlockFile(l.lock)
	t, err := l.tip()
	if err != nil {
		return err
	}
	if err := l.recordGap(&t); err != nil {
		return err
	}
	buf := l.batch[:0]
	if need := 320 * len(es); cap(buf) < need { // a call's event is about 300 bytes
		buf = make([]byte, 0, need)
	}
	defer func() {
		if cap(buf) <= maxKeptBatch {
			l.batch = buf[:0]
		}
	}()
	for _, p := range ps {
		if err := l.writeTo(&t, p, &buf); err != nil {
			return err
		}
	}
	if err := l.flush(&t, &buf); err != nil {
		return err
	}
	return writeHead(l.dir, t.seq, t.hash)
}

// maxKeptBatch bounds the buffer AppendAll keeps for the next batch: a
// full batch of calls' events (256 of about 300 bytes), not a burst of
// large ones.
const maxKeptBatch = 128 << 10

// maxKeptEvents bounds the prepared events AppendAll keeps room for
// between batches: a full batch of calls' events, 84 KB. Without it each
// batch would allocate its events again: 328 bytes each, two a call, more
// garbage a call than the rest of the audit's.
const maxKeptEvents = 256

// prepare checks and reduces e for writing, its time set when it has
// none; writeTo gives it its place in the chain.
func (l *Log) prepare(e Event) (Event, error) {
	if e.Time.IsZero() {
		e.Time = l.opts.Now()
	}
	return prepareSeen(e, 1, zeroHash, &l.seen)
}

// recordGap writes a gap event when the head says the log held more, or
// other, events than it now does.
func (l *Log) recordGap(t *tip) error {
	h, ok, err := readHead(l.dir)
	switch {
	case err != nil:
		return l.write(t, Event{Op: OpGap, Outcome: Noted, Code: "head-unreadable"})
	case !ok || h.seq < t.seq:
		// No head yet, or an append was interrupted before its head
		// update: nothing was lost.
		return nil
	case h.seq > t.seq:
		return l.write(t, Event{Op: OpGap, Outcome: Noted, Code: "head-ahead", Count: h.seq - t.seq})
	case h.hash != t.hash:
		return l.write(t, Event{Op: OpGap, Outcome: Noted, Code: "head-mismatch"})
	}
	return nil
}

// write appends e after t, rotating and pruning first when current.jsonl
// would pass MaxFileBytes, and advances t.
func (l *Log) write(t *tip, e Event) error {
	p, err := l.prepare(e)
	if err != nil {
		return err
	}
	var buf []byte
	if err := l.writeTo(t, p, &buf); err != nil {
		return err
	}
	return l.flush(t, &buf)
}

// writeTo adds the line of p (prepared by l.prepare) to buf (lines not
// yet in current.jsonl) and advances t; when current.jsonl would pass
// MaxFileBytes it writes buf out, then rotates and prunes, first.
func (l *Log) writeTo(t *tip, p Event, buf *[]byte) error {
	p.Seq, p.Prev = t.seq+1, t.hash
	line, err := encodeTo(l.line[:0], &p, &l.seen)
	if err != nil {
		return invalid("the time cannot be encoded")
	}
	l.line = line[:0]
	if t.size > 0 && t.size+int64(len(line))+1 > l.opts.MaxFileBytes {
		if err := l.flush(t, buf); err != nil {
			return err
		}
		if err := l.rotate(t); err != nil {
			return err
		}
		if err := l.prune(t); err != nil {
			return err
		}
		p.Seq, p.Prev = t.seq+1, t.hash
		if line, err = encode(&p); err != nil {
			return invalid("the time cannot be encoded")
		}
	}
	*buf = append(append(*buf, line...), '\n')
	t.advance(p.Seq, lineHash(line), int64(len(line))+1)
	return nil
}

// flush writes buf to current.jsonl with one write(2) and empties it.
func (l *Log) flush(t *tip, buf *[]byte) error {
	if len(*buf) == 0 {
		return nil
	}
	f, err := atomicfile.OpenFile(filepath.Join(l.dir, currentName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("writing the audit log: %w", err)
	}
	l.last = nil
	_, err = f.Write(*buf)
	if err == nil && l.opts.Sync {
		err = f.Sync()
	}
	fi, serr := f.Stat()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	*buf = (*buf)[:0]
	if err != nil {
		return fmt.Errorf("writing the audit log: %w", err)
	}
	if serr == nil && fi.Size() == t.size {
		cp := *t
		l.last, l.lastFile = &cp, fi
	}
	return nil
}

// rotate renames current.jsonl to its first event's name.
func (l *Log) rotate(t *tip) error {
	cur := filepath.Join(l.dir, currentName)
	f, err := atomicfile.OpenFile(cur, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("rotating the audit log: %w", err)
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return fmt.Errorf("rotating the audit log: %w", err)
	}
	dst := filepath.Join(l.dir, rotatedName(t.first))
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("rotating the audit log: %s already exists", filepath.Base(dst))
	}
	if err := os.Rename(cur, dst); err != nil {
		return fmt.Errorf("rotating the audit log: %w", err)
	}
	t.size, t.first = 0, 0
	return syncDir(l.dir)
}

// prune deletes the oldest rotated files beyond MaxFiles, after writing a
// prune event anchored at the last deleted line. A victim whose last line
// cannot be read is kept: pruning is housekeeping, never worth a gap.
func (l *Log) prune(t *tip) error {
	files, err := rotatedFiles(l.dir)
	if err != nil || len(files) <= l.opts.MaxFiles {
		return err
	}
	victims := files[:len(files)-l.opts.MaxFiles]
	last, err := lastLineOf(filepath.Join(l.dir, victims[len(victims)-1].name))
	if err != nil {
		return nil
	}
	ev, err := parseLine(last)
	if err != nil {
		return nil
	}
	anchor := &Anchor{Seq: ev.Seq, Hash: lineHash(last)}
	if err := l.write(t, Event{Op: OpPrune, Outcome: Noted, Count: int64(len(victims)), Anchor: anchor}); err != nil {
		return err
	}
	for _, v := range victims {
		if err := os.Remove(filepath.Join(l.dir, v.name)); err != nil {
			return fmt.Errorf("pruning the audit log: %w", err)
		}
	}
	return syncDir(l.dir)
}
