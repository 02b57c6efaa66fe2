package audit

import (
	"fmt"
	"time"
)

// This file serves a log kept somewhere other than files (the fleet's
// database, package pgstate): the same lines, the same chain, the same
// verification; only where the lines live differs. Such a log has no
// rotation: its store keeps every line in seq order and a head (the last
// line's seq and hash) written with each append.

// EncodeAfter returns es as the lines that follow the event seq whose
// line hashes to prev (0 and "" for an empty log), exactly as a Log
// writes them, and the hash of the last. Events without a time get now.
// Nothing is returned when one of them is invalid (ErrInvalidEvent).
func EncodeAfter(es []Event, seq int64, prev string, now time.Time) (lines [][]byte, last string, err error) {
	if seq == 0 {
		prev = zeroHash
	}
	if seq < 0 || !isHex(prev, 64) {
		return nil, "", invalid("a malformed tip")
	}
	for _, e := range es {
		if e.Op == OpPrune {
			return nil, "", invalid("a prune event in a log without rotation")
		}
		if e.Time.IsZero() {
			e.Time = now
		}
		p, err := prepare(e, seq+1, prev)
		if err != nil {
			return nil, "", err
		}
		line, err := encode(&p)
		if err != nil {
			return nil, "", invalid("the time cannot be encoded")
		}
		lines = append(lines, line)
		seq, prev = seq+1, lineHash(line)
	}
	return lines, prev, nil
}

// GapEvent is the event an append writes first when the head it finds
// says the log held more, or other, events than it does (see the package
// doc's Tamper evidence): seq and hash are the log's last line, headSeq
// and headHash its head's. ok is false when nothing was lost.
func GapEvent(seq int64, hash string, headSeq int64, headHash string, hasHead bool) (Event, bool) {
	switch {
	case !hasHead || headSeq < seq:
		return Event{}, false
	case headSeq > seq:
		return Event{Op: OpGap, Outcome: Noted, Code: "head-ahead", Count: headSeq - seq}, true
	case headHash != hash:
		return Event{Op: OpGap, Outcome: Noted, Code: "head-mismatch"}, true
	}
	return Event{}, false
}

// LineHash returns the hash the next line's prev must name.
func LineHash(line []byte) string { return lineHash(line) }

// ParseLine decodes one line and checks that it is exactly what a Log
// writes for a valid event (it says nothing of the chain).
func ParseLine(line []byte) (Event, error) {
	if len(line) > maxLineBytes {
		return Event{}, fmt.Errorf("is longer than %d bytes", maxLineBytes)
	}
	return parseLine(line)
}

// A LineVerifier verifies a log kept elsewhere, line by line in seq
// order, as Verify verifies files.
type LineVerifier struct {
	where string
	v     verifier
	n     int
}

// NewLineVerifier starts verifying a log; where names it in faults.
func NewLineVerifier(where string) *LineVerifier {
	rep := &Report{Faults: []Fault{}, Notes: []string{}}
	return &LineVerifier{where: where, v: verifier{rep: rep, prevHash: zeroHash, anchors: map[int64]string{}}}
}

// Line checks the next line.
func (lv *LineVerifier) Line(line []byte) {
	lv.n++
	if len(line) > maxLineBytes {
		lv.v.fault(lv.where, lv.n, 0, "a line is longer than %d bytes", maxLineBytes)
		lv.v.prevSeq++
		lv.v.prevHash = lineHash(line)
		return
	}
	lv.v.line(lv.where, lv.n, line, 0)
}

// SetHead gives the head the store recorded; call it before the lines.
func (lv *LineVerifier) SetHead(seq int64, hash string) {
	lv.v.head, lv.v.hasHead = head{seq: seq, hash: hash}, true
}

// Report finishes: the start of the chain and the head are checked.
func (lv *LineVerifier) Report() *Report {
	lv.v.rep.Files = 1
	lv.v.checkStart()
	lv.v.checkHead(nil)
	if lv.v.rep.Events == 0 && !lv.v.hasHead {
		lv.v.rep.Notes = append(lv.v.rep.Notes, "there is no audit log yet")
	}
	return lv.v.rep
}
