package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// A Report is what Verify found.
type Report struct {
	// Events is the number of events read.
	Events int64 `json:"events"`
	// First and Last are the first and last seq present (0 when empty).
	First int64 `json:"first"`
	Last  int64 `json:"last"`
	// Files is the number of log files read.
	Files  int     `json:"files"`
	Faults []Fault `json:"faults"`
	// Notes are findings that are not tampering (an interrupted append,
	// pruned files).
	Notes []string `json:"notes"`
}

// OK reports whether the log verified without faults.
func (r *Report) OK() bool { return len(r.Faults) == 0 }

// A Fault is one piece of tamper evidence.
type Fault struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Seq    int64  `json:"seq,omitempty"`
	Reason string `json:"reason"`
}

// maxFaults bounds a report: past a hundred faults, more detail helps no one.
const maxFaults = 100

// maxTolerableHeadLag is how far the head may trail the log: one Append
// writes at most three events (gap, prune, the event) before its head.
const maxTolerableHeadLag = 3

type verifier struct {
	rep      *Report
	prevSeq  int64
	prevHash string
	firstPrv string
	anchors  map[int64]string // prune anchors: seq -> hash
	head     head
	hasHead  bool
	headHash string // the hash of the line at head.seq, once read
}

func (v *verifier) fault(file string, line int, seq int64, format string, args ...any) {
	if len(v.rep.Faults) < maxFaults {
		v.rep.Faults = append(v.rep.Faults, Fault{File: file, Line: line, Seq: seq, Reason: fmt.Sprintf(format, args...)})
	}
}

// Verify checks the audit log under home: every line's form, the hash
// chain across every file, file names, prune anchors and the head. A log
// that does not exist verifies, with a note.
func Verify(home string) (*Report, error) {
	dir := Dir(home)
	rep := &Report{Faults: []Fault{}, Notes: []string{}}
	v := &verifier{rep: rep, prevHash: zeroHash, anchors: map[int64]string{}}
	switch fi, err := os.Lstat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		rep.Notes = append(rep.Notes, "there is no audit log yet")
		return rep, nil
	case err != nil:
		return nil, err
	case !fi.IsDir():
		v.fault("", 0, 0, "the audit folder is not a folder (a symbolic link or a special file)")
		return rep, nil
	}
	unlock, err := sharedLock(dir)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		// Verify only reads: it goes on without the lock.
		v.fault(lockName, 0, 0, "%v", err)
		unlock, err = func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	defer unlock()
	h, ok, herr := readHead(dir)
	v.head, v.hasHead = h, ok
	files, err := rotatedFiles(dir)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := v.file(dir, f.name, f.first, false); err != nil {
			return nil, err
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, currentName)); err == nil {
		if err := v.file(dir, currentName, 0, true); err != nil {
			return nil, err
		}
	}
	v.checkStart()
	v.checkHead(herr)
	return rep, nil
}

// file verifies one file. first is the seq its name claims (rotated).
func (v *verifier) file(dir, name string, first int64, current bool) error {
	f, err := atomicfile.Open(filepath.Join(dir, name))
	if errors.Is(err, atomicfile.ErrNotRegular) {
		v.fault(name, 0, 0, "%v", err)
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	v.rep.Files++
	r := bufio.NewReaderSize(f, maxLineBytes+1)
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			v.fault(name, n+1, 0, "a line is longer than %d bytes", maxLineBytes)
			return nil
		}
		if err == io.EOF {
			if len(line) > 0 {
				if current {
					v.rep.Notes = append(v.rep.Notes, "current.jsonl ends in an interrupted append; the next append removes it")
				} else {
					v.fault(name, n+1, 0, "the file ends in a partial line")
				}
			}
			break
		}
		if err != nil {
			return err
		}
		n++
		v.line(name, n, bytes.TrimSuffix(line, []byte("\n")), first)
	}
	if n == 0 && !current {
		v.fault(name, 0, 0, "a rotated file is empty")
	}
	return nil
}

func (v *verifier) line(name string, n int, line []byte, nameSeq int64) {
	e, err := parseLine(line)
	if err != nil {
		v.fault(name, n, 0, "the line %v", err)
		// Chain the next line to this one's bytes, so one changed line
		// is one fault, not a cascade.
		v.prevSeq++
		v.prevHash = lineHash(line)
		return
	}
	h := lineHash(line)
	switch {
	case v.rep.Events == 0:
		v.rep.First = e.Seq
		v.firstPrv = e.Prev
	case e.Seq != v.prevSeq+1:
		v.fault(name, n, e.Seq, "event %d follows event %d: events are missing or out of order", e.Seq, v.prevSeq)
	case e.Prev != v.prevHash:
		v.fault(name, n, e.Seq, "event %d does not chain to the line before it: that line was changed, removed or reordered", e.Seq)
	}
	if n == 1 && nameSeq != 0 && e.Seq != nameSeq {
		v.fault(name, n, e.Seq, "the file is named for event %d but starts at event %d", nameSeq, e.Seq)
	}
	switch e.Op {
	case OpPrune:
		if e.Anchor != nil {
			v.anchors[e.Anchor.Seq] = e.Anchor.Hash
		}
	case OpGap:
		v.fault(name, n, e.Seq, "an append found the log shorter or other than its head said (%s): events before %d were removed or changed", e.Code, e.Seq)
	}
	if v.hasHead && e.Seq == v.head.seq {
		v.headHash = h
	}
	v.rep.Events++
	v.rep.Last = e.Seq
	v.prevSeq, v.prevHash = e.Seq, h
}

// checkStart checks that the earliest event is event 1 or chains to a
// prune anchor.
func (v *verifier) checkStart() {
	switch {
	case v.rep.Events == 0 || v.rep.First == 1 && v.firstPrv == zeroHash:
	case v.rep.First == 1:
		v.fault("", 0, 1, "event 1 does not start the chain")
	case v.anchors[v.rep.First-1] == v.firstPrv:
		v.rep.Notes = append(v.rep.Notes, fmt.Sprintf("events 1 to %d were pruned by rotation", v.rep.First-1))
	default:
		v.fault("", 0, v.rep.First, "the log starts at event %d and no prune event accounts for the events before it", v.rep.First)
	}
}

func (v *verifier) checkHead(herr error) {
	switch {
	case errors.Is(herr, atomicfile.ErrNotRegular):
		v.fault(headName, 0, 0, "%v", herr)
	case herr != nil:
		v.fault(headName, 0, 0, "the head file is malformed")
	case !v.hasHead && v.rep.Events > 0:
		v.fault(headName, 0, 0, "the head file is missing")
	case !v.hasHead:
	case v.head.seq > v.rep.Last:
		v.fault(headName, 0, v.head.seq, "the head names event %d but the log ends at event %d: events were removed from the end", v.head.seq, v.rep.Last)
	case v.headHash != "" && v.headHash != v.head.hash:
		v.fault(headName, 0, v.head.seq, "event %d is not the event the head recorded: it was changed", v.head.seq)
	case v.rep.Last-v.head.seq > maxTolerableHeadLag:
		v.fault(headName, 0, v.head.seq, "%d events follow the head's last event: they were added without an append", v.rep.Last-v.head.seq)
	case v.rep.Last > v.head.seq:
		v.rep.Notes = append(v.rep.Notes, "the head trails the log by an interrupted append; the next append updates it")
	}
}

// sharedLock takes the log's lock for reading, if the lock file exists.
func sharedLock(dir string) (func(), error) {
	f, err := atomicfile.Open(filepath.Join(dir, lockName))
	if errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := lockFile(f, false); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the audit log: %w", err)
	}
	return func() { unlockFile(f); f.Close() }, nil
}
