package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// This file is the audit log as a stream: the chained lines after a
// position, exactly as written, for a sink that ships them elsewhere, and
// the check of a receiver's copy against the local chain.

// Line is one chained line as written, with its position in the chain.
type Line struct {
	Seq  int64
	Prev string // the hash of the line before it
	Hash string // SHA-256 of Raw
	Raw  []byte // the line without its newline
}

// ErrUnreadable means a line of the log is not as mcpseal writes it: the
// stream stops there rather than ship something the chain does not hold.
var ErrUnreadable = errors.New("the audit log holds a line that does not verify")

// ReadAfter returns up to max lines whose seq follows after, in chain
// order, and the earliest seq the log still holds (0 for an empty log;
// when earliest > after+1 the lines between were pruned). It reads under
// the log's shared lock; each line is checked as Verify checks it.
func ReadAfter(home string, after int64, max int) (lines []Line, earliest int64, err error) {
	dir, files, unlock, present, err := openForReading(home)
	if err != nil || !present {
		return nil, 0, err
	}
	defer unlock()
	names := make([]string, 0, len(files)+1)
	// Skip every rotated file whose successor starts at or before after+1.
	start := 0
	for i := range files {
		if i+1 < len(files) && files[i+1].first <= after+1 {
			start = i + 1
		}
	}
	if len(files) > 0 {
		earliest = files[0].first
		if first, err := firstLineOf(filepath.Join(dir, currentName)); err == nil {
			if seq, ok := peekSeq(first); ok && seq <= after+1 {
				start = len(files) // every rotated file is before it
			}
		}
		for _, f := range files[start:] {
			names = append(names, f.name)
		}
	}
	names = append(names, currentName)
	for _, name := range names {
		got, first, err := readLinesAfter(filepath.Join(dir, name), after, max-len(lines))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		if earliest == 0 {
			earliest = first
		}
		lines = append(lines, got...)
		if len(lines) >= max {
			break
		}
	}
	return lines, earliest, nil
}

// openForReading takes the log's shared lock and lists its rotated files,
// oldest first; present is false when there is no log yet.
func openForReading(home string) (dir string, files []rotated, unlock func(), present bool, err error) {
	dir = Dir(home)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return dir, nil, nil, false, nil
	}
	unlock, err = sharedLock(dir)
	if err != nil {
		return dir, nil, nil, false, err
	}
	files, err = rotatedFiles(dir)
	if err != nil {
		unlock()
		return dir, nil, nil, false, err
	}
	return dir, files, unlock, true, nil
}

// readLinesAfter reads one file's lines after seq, up to max; first is
// the file's first seq (0 when empty). A partial last line (an append in
// progress) is left for the next read.
func readLinesAfter(path string, after int64, max int) ([]Line, int64, error) {
	f, err := atomicfile.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var (
		out   []Line
		first int64
	)
	for len(out) < max {
		raw, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) || len(raw) > maxLineBytes+1 {
			return nil, 0, fmt.Errorf("%w: a line of %s is too long", ErrUnreadable, filepath.Base(path))
		}
		if err != nil {
			break // end of file, or a partial line still being written
		}
		line := raw[:len(raw)-1]
		seq, ok := peekSeq(line)
		if !ok {
			return nil, 0, fmt.Errorf("%w (in %s)", ErrUnreadable, filepath.Base(path))
		}
		if first == 0 {
			first = seq
		}
		if seq <= after {
			continue
		}
		e, err := parseLine(line)
		if err != nil || e.Seq != seq {
			return nil, 0, fmt.Errorf("%w (event %d)", ErrUnreadable, seq)
		}
		out = append(out, Line{Seq: seq, Prev: e.Prev, Hash: lineHash(line), Raw: bytes.Clone(line)})
	}
	return out, first, nil
}

// peekSeq reads the seq of a line without decoding it: every line starts
// {"v":1,"seq":N, (the member order is fixed).
func peekSeq(line []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"v":1,"seq":`))
	if !ok {
		return 0, false
	}
	var n int64
	i := 0
	for ; i < len(rest) && i < 19 && '0' <= rest[i] && rest[i] <= '9'; i++ {
		n = n*10 + int64(rest[i]-'0')
	}
	if i == 0 || i == len(rest) || rest[i] != ',' || rest[0] == '0' {
		return 0, false
	}
	return n, true
}

// Head returns the seq of the log's last event as its head records it (0
// when there is none yet).
func Head(home string) (int64, error) {
	h, ok, err := readHead(Dir(home))
	if err != nil || !ok {
		return 0, err
	}
	return h.seq, nil
}

// StreamReport is what CheckStream found in a receiver's copy.
type StreamReport struct {
	// Events is the number of distinct events in the copy; First and
	// Last their range.
	Events      int   `json:"events"`
	First       int64 `json:"first"`
	Last        int64 `json:"last"`
	Duplicates  int   `json:"duplicates"`  // identical repeats (at-least-once delivery)
	NotYet      int64 `json:"not_yet"`     // local events after the copy's last
	Unavailable int   `json:"unavailable"` // copy events the local log no longer holds (pruned)
	// Unanchored counts pruned copy events that no hash the local log
	// keeps vouches for: not followed, without a gap, by an event whose
	// hash a prune record (or the local log's first event) holds.
	Unanchored int           `json:"unanchored"`
	Faults     []StreamFault `json:"faults"`
}

// OK says the copy is a faithful, gapless part of the chain.
func (r *StreamReport) OK() bool { return len(r.Faults) == 0 }

// StreamFault is one finding; it never quotes the copy's bytes.
type StreamFault struct {
	Seq    int64  `json:"seq,omitempty"`
	Reason string `json:"reason"` // gap, rewrite, conflict, chain, malformed, missing
	Detail string `json:"detail"`
}

// maxStreamFaults bounds the faults one check reports: after that many,
// the copy is plainly not the chain.
const maxStreamFaults = 1000

// StreamBounds are the events a copy must hold, whatever its own first
// and last say: From to To (0: the copy's own first, or last). A copy
// missing its first or last acknowledged batch is otherwise a shorter
// copy that verifies.
type StreamBounds struct {
	From, To int64
}

// CheckStream checks a copy within its own first and last events; see
// CheckStreamWithin.
func CheckStream(home string, copyLines [][]byte) (*StreamReport, error) {
	return CheckStreamWithin(home, copyLines, StreamBounds{})
}

// CheckStreamWithin checks a receiver's copy of the stream (its lines, in
// the order received, duplicates allowed) against the local chain: every
// event must be byte for byte the local line of its seq (a rewrite is a
// fault), a repeated seq must repeat the same bytes, the copy's events
// must run without a gap from b.From (else its first) to b.To (else its
// last), and each must chain to the one before. Events the local log has
// pruned are checked by the chain and tied to the hashes the local log
// kept of them: each prune record's anchor (the last event it deleted)
// and the first event's prev; a pruned event whose chain leads to an
// anchor with another hash is a rewrite.
func CheckStreamWithin(home string, copyLines [][]byte, b StreamBounds) (*StreamReport, error) {
	return CheckStreamOf(FileLog(home), copyLines, b)
}

// FileLog is the audit log under home as a StreamLog.
func FileLog(home string) StreamLog { return fileStream(home) }

// A StreamLog is a chain CheckStreamOf checks a copy against: the files
// under a home, or the fleet's database (pgstate.AuditExport).
type StreamLog interface {
	// ReadAfter is ReadAfter's contract on this log.
	ReadAfter(after int64, max int) (lines []Line, earliest int64, err error)
	// Head returns the seq of the last event (0 when none).
	Head() (int64, error)
}

type fileStream string

func (h fileStream) ReadAfter(after int64, max int) ([]Line, int64, error) {
	return ReadAfter(string(h), after, max)
}

func (h fileStream) Head() (int64, error) { return Head(string(h)) }

// CheckStreamOf is CheckStreamWithin against any StreamLog.
func CheckStreamOf(log StreamLog, copyLines [][]byte, b StreamBounds) (*StreamReport, error) {
	rep := &StreamReport{Faults: []StreamFault{}}
	fault := func(seq int64, reason, format string, args ...any) {
		if len(rep.Faults) < maxStreamFaults {
			rep.Faults = append(rep.Faults, StreamFault{Seq: seq, Reason: reason, Detail: fmt.Sprintf(format, args...)})
		}
	}
	got := map[int64][]byte{}
	for i, raw := range copyLines {
		seq, ok := peekSeq(raw)
		if !ok {
			fault(0, "malformed", "line %d of the copy is not an audit event", i+1)
			continue
		}
		if prior, dup := got[seq]; dup {
			if bytes.Equal(prior, raw) {
				rep.Duplicates++
			} else {
				fault(seq, "conflict", "event %d arrived twice with different bytes", seq)
			}
			continue
		}
		got[seq] = raw
	}
	seqs := make([]int64, 0, len(got))
	for s := range got {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	rep.Events = len(seqs)
	if len(seqs) > 0 {
		rep.First, rep.Last = seqs[0], seqs[len(seqs)-1]
	}
	// One bound implies the other: a copy checked "up to N" must also
	// hold every event from 1, and one checked "from N" every event up
	// to the local head; else --to below the copy's first, or --from on
	// an empty copy, would be an empty range that any copy meets.
	if b.From > 0 || b.To > 0 {
		if b.From == 0 {
			b.From = 1
		}
		if b.To == 0 {
			head, err := log.Head()
			if err != nil {
				return nil, err
			}
			if head < b.From {
				fault(b.From, "gap", "the copy must hold the events from %d on, and the local log ends at %d", b.From, head)
			}
			b.To = head
		}
	}
	switch {
	case len(seqs) == 0 && b.From > 0:
		fault(b.From, "gap", "events %d to %d are missing from the copy (it holds none)", b.From, max(b.To, b.From))
	case len(seqs) == 0:
	default:
		if b.From > 0 && rep.First > b.From {
			fault(b.From, "gap", "events %d to %d are missing from the copy, before its first", b.From, rep.First-1)
		}
		if b.To > 0 && rep.Last < b.To {
			fault(rep.Last+1, "gap", "events %d to %d are missing from the copy, after its last (the sink acknowledged up to %d)", rep.Last+1, b.To, b.To)
		}
	}
	if len(seqs) == 0 {
		return rep, nil
	}
	local, anchors, pruned, head, err := localFor(log, rep.First, rep.Last)
	if err != nil {
		return nil, err
	}
	if head > rep.Last {
		rep.NotYet = head - rep.Last
	}
	var (
		prevHash string
		pending  int // pruned events in a row, chained, not yet tied to an anchor
	)
	for i, s := range seqs {
		raw := got[s]
		if i > 0 && s != seqs[i-1]+1 {
			fault(seqs[i-1]+1, "gap", "events %d to %d are missing from the copy", seqs[i-1]+1, s-1)
			prevHash = ""
			rep.Unanchored += pending
			pending = 0
		}
		e, err := parseLine(raw)
		if err != nil {
			fault(s, "malformed", "event %d %v", s, err)
			prevHash = ""
			rep.Unanchored += pending
			pending = 0
			continue
		}
		if prevHash != "" && e.Prev != prevHash {
			fault(s, "chain", "event %d does not chain to the event before it", s)
			rep.Unanchored += pending
			pending = 0
		}
		h := lineHash(raw)
		prevHash = h
		l, ok := local[s]
		switch {
		case !ok && s <= pruned:
			rep.Unavailable++ // pruned by rotation here, as a prune record says
			pending++
			if want, anchored := anchors[s]; anchored {
				if want != h {
					fault(s, "rewrite", "event %d differs from the hash the local log kept of it (a prune record): events up to it were rewritten", s)
				}
				pending = 0
			}
		case !ok:
			// Before the log's first event too, when no prune record
			// accounts for it: the oldest file deleted by hand, or rows
			// deleted from the database log (which is never pruned).
			fault(s, "missing", "the local log does not hold event %d and no prune record accounts for it: it was removed here", s)
		case !bytes.Equal(l.Raw, raw):
			fault(s, "rewrite", "event %d differs from the local log's", s)
		}
	}
	rep.Unanchored += pending
	return rep, nil
}

// localFor reads the local log for a copy of first to last: its lines in
// that range, the anchors of every prune record it holds (with the first
// event's prev as the anchor of the event before it), the last seq a
// prune record accounts for (its anchor: every event up to it was pruned
// by rotation; 0 when none), and its head. The whole log is read only
// when the copy holds events the log no longer holds (the anchors may be
// anywhere in it); the files are bounded by their retention, and a
// database log is never pruned.
func localFor(log StreamLog, first, last int64) (map[int64]Line, map[int64]string, int64, int64, error) {
	local := map[int64]Line{}
	anchors := map[int64]string{}
	var pruned int64
	_, earliest, err := log.ReadAfter(first-1, 1)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	after, stop := first-1, last
	if earliest > first {
		after, stop = 0, -1 // events before the log's first: every anchor counts
	}
	for stop < 0 || after < stop {
		lines, _, err := log.ReadAfter(after, 4096)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		if len(lines) == 0 {
			break
		}
		if after == 0 && lines[0].Seq > 1 {
			anchors[lines[0].Seq-1] = lines[0].Prev
		}
		for _, l := range lines {
			if l.Seq >= first && l.Seq <= last {
				local[l.Seq] = l
			}
			if bytes.Contains(l.Raw, []byte(`"op":"prune"`)) {
				if ev, err := parseLine(l.Raw); err == nil && ev.Op == OpPrune && ev.Anchor != nil {
					anchors[ev.Anchor.Seq] = ev.Anchor.Hash
					pruned = max(pruned, ev.Anchor.Seq)
				}
			}
		}
		after = lines[len(lines)-1].Seq
	}
	head, err := log.Head()
	if err != nil {
		head = 0
	}
	return local, anchors, pruned, head, nil
}
