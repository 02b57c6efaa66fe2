package siem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// A Source is the audit chain the shippers read and the place each sink's
// cursor is kept: the files under $MCPSEAL_HOME (FileSource) or the
// fleet's database (pgstate.AuditExport). Its methods are called from the
// shippers' goroutines, never on a call's path.
type Source interface {
	// ReadAfter returns up to max lines whose seq follows after, in chain
	// order, each checked as verify checks it, and the earliest seq the
	// log still holds (0 when empty). See audit.ReadAfter.
	ReadAfter(after int64, max int) (lines []audit.Line, earliest int64, err error)
	// Head returns the seq of the chain's last event (0 when none).
	Head() (int64, error)
	// Cursor returns the last seq the sink acknowledged and that event's
	// line hash (0, "" when it took none). A cursor that is not exactly
	// what SetCursor writes is an error, never read as 0.
	Cursor(sink string) (seq int64, hash string, err error)
	// Bind names the sink's destination (Destination's fingerprint)
	// before the first Lead. A Source whose cursors several processes
	// share keeps it with the cursor: Lead and Cursor fail
	// (pgstate.ErrOtherDestination) for a process that names another, so
	// that it never ships the shared log elsewhere or moves the cursor.
	Bind(sink, destination string)
	// Lead says whether this process ships for the sink now, taking the
	// role when nobody holds it; called before every batch (the fleet's
	// role is a lease, renewed by each call).
	Lead(sink string) (bool, error)
	// Release gives the sink's role up, so that another process takes
	// it: the shipper calls it when the sink refused several batches in
	// a row (this process may be the only one that cannot reach it).
	Release(sink string) error
	// SetCursor moves the sink's cursor forward to seq; it fails, and the
	// cursor stays, when this process no longer ships for the sink.
	SetCursor(sink string, seq int64, hash string) error
	// Close gives up every role.
	Close() error
}

// FileSource is the audit log under home, with each sink's cursor and
// lock in $MCPSEAL_HOME/audit/export/SINK/.
func FileSource(home string) Source {
	return &fileSource{home: home, locks: map[string]*os.File{}, held: map[string]bool{}}
}

type fileSource struct {
	home  string
	mu    sync.Mutex
	locks map[string]*os.File
	held  map[string]bool
}

func (f *fileSource) ReadAfter(after int64, max int) ([]audit.Line, int64, error) {
	return audit.ReadAfter(f.home, after, max)
}

func (f *fileSource) Head() (int64, error) { return audit.Head(f.home) }

func (f *fileSource) dir(sink string) string { return filepath.Join(audit.Dir(f.home), "export", sink) }

// open makes the sink's folder and opens its lock file.
func (f *fileSource) open(sink string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.locks[sink] != nil {
		return nil
	}
	if err := os.MkdirAll(f.dir(sink), 0o700); err != nil {
		return err
	}
	lf, err := atomicfile.OpenFile(filepath.Join(f.dir(sink), ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	f.locks[sink] = lf
	return nil
}

// Lead holds the sink folder's exclusive lock once it got it, until Close.
func (f *fileSource) Lead(sink string) (bool, error) {
	if err := f.open(sink); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.held[sink] {
		f.held[sink] = tryLock(f.locks[sink])
	}
	return f.held[sink], nil
}

// Bind: the files' cursors are this home's, not shared with processes
// configured elsewhere.
func (f *fileSource) Bind(sink, destination string) {}

// Release closes the sink's lock file, which drops its lock.
func (f *fileSource) Release(sink string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if lf := f.locks[sink]; lf != nil {
		lf.Close()
		delete(f.locks, sink)
		delete(f.held, sink)
	}
	return nil
}

func (f *fileSource) Cursor(sink string) (int64, string, error) {
	data, err := atomicfile.ReadFile(filepath.Join(f.dir(sink), "cursor"), maxCursorBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	return parseCursor(string(data))
}

// parseCursor reads a cursor file: exactly what cursorFormat writes.
func parseCursor(str string) (int64, string, error) {
	rest, ok := strings.CutPrefix(str, "mcpseal-audit-cursor v1 ")
	if !ok || len(rest) != 20+1+64+1 {
		return 0, "", errors.New("the sink's cursor file is malformed")
	}
	n, err := strconv.ParseInt(rest[:20], 10, 64)
	hash := rest[21:85]
	if err != nil || n < 1 || fmt.Sprintf(cursorFormat, n, hash) != str {
		return 0, "", errors.New("the sink's cursor file is malformed")
	}
	return n, hash, nil
}

func (f *fileSource) SetCursor(sink string, seq int64, hash string) error {
	return atomicfile.WriteFile(filepath.Join(f.dir(sink), "cursor"), fmt.Appendf(nil, cursorFormat, seq, hash), 0o600)
}

func (f *fileSource) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, lf := range f.locks {
		lf.Close()
		delete(f.locks, k)
		delete(f.held, k)
	}
	return nil
}

// SinkCursor returns the last seq the sink acknowledged, from its cursor
// in src; present is false when it has none (it took nothing yet). A name
// that is not a sink's is an error (it names a folder or a row).
func SinkCursor(src Source, sink string) (seq int64, present bool, err error) {
	if !validSinkName(sink) {
		return 0, false, errors.New("a sink name is 1 to 32 of [a-z0-9-], not starting with -")
	}
	seq, _, err = src.Cursor(sink)
	return seq, seq > 0, err
}
