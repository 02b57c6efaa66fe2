package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Event operations.
const (
	opPin     = "pin"
	opProfile = "profile"
	opDrift   = "drift"
	opReview  = "review"
	opApprove = "approve"
	opForget  = "forget"
)

// zeroHash is the prev of the first event.
var zeroHash = strings.Repeat("0", 64)

// An event is one line of events.jsonl. The member order is the format.
type event struct {
	Seq    int64     `json:"seq"`
	Time   time.Time `json:"time"`
	Op     string    `json:"op"`
	ID     string    `json:"id"`
	Record *string   `json:"record"`
	Prev   string    `json:"prev"`
	// By names who approved (approve events only; absent otherwise and
	// in chains written before it existed).
	By string `json:"by,omitempty"`
}

// encode returns the event's line, without the newline. It fails only for
// a time outside the years 0–9999.
func (e *event) encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// chain is the parsed, verified event log.
type chain struct {
	exists bool   // events.jsonl exists
	n      int64  // number of events
	last   string // hash of the last line, zeroHash when empty
	size   int64  // length of the complete lines
	torn   bool   // bytes without a final newline follow size
	// latest holds each server's latest event.
	latest map[string]event
	// before holds, for each server, the record hash of the event before
	// its latest (nil if none), which a forget left behind.
	before map[string]*string
	// all holds every event, in order.
	all []event
}

func emptyChain() *chain {
	return &chain{last: zeroHash, latest: map[string]event{}, before: map[string]*string{}}
}

func lineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// parseChain parses and verifies events.jsonl. Bytes after the last newline
// are an interrupted append: they are not part of the chain.
func parseChain(data []byte) (*chain, error) {
	c := emptyChain()
	c.exists = true
	end := bytes.LastIndexByte(data, '\n') + 1
	c.size = int64(end)
	c.torn = end < len(data)
	rest := data[:end]
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		line := rest[:i]
		rest = rest[i+1:]
		seq := c.n + 1
		var e event
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || dec.More() {
			return nil, fmt.Errorf("events.jsonl line %d does not parse", seq)
		}
		if enc, err := e.encode(); err != nil || !bytes.Equal(enc, line) {
			return nil, fmt.Errorf("events.jsonl line %d is not in canonical form", seq)
		}
		if e.Seq != seq {
			return nil, fmt.Errorf("events.jsonl line %d has sequence number %d", seq, e.Seq)
		}
		if e.Prev != c.last {
			return nil, fmt.Errorf("events.jsonl line %d does not chain to the line before it", seq)
		}
		if err := e.check(); err != nil {
			return nil, fmt.Errorf("events.jsonl line %d: %v", seq, err)
		}
		c.add(e, lineHash(line))
	}
	return c, nil
}

func (e *event) check() error {
	if !isID(e.ID) {
		return fmt.Errorf("invalid server id")
	}
	switch e.Op {
	case opPin, opProfile, opDrift, opReview, opApprove:
		if e.Record == nil || !isDigest(*e.Record) {
			return fmt.Errorf("%s event without a record digest", e.Op)
		}
	case opForget:
		if e.By != "" {
			return fmt.Errorf("forget event with an approver")
		}
		if e.Record != nil {
			return fmt.Errorf("forget event with a record digest")
		}
	default:
		return fmt.Errorf("unknown operation")
	}
	if e.By != "" && (e.Op != opApprove || checkBy(e.By) != nil) {
		return fmt.Errorf("%s event with an invalid approver", e.Op)
	}
	return nil
}

// add records a verified event whose line hashes to h.
func (c *chain) add(e event, h string) {
	if prev, ok := c.latest[e.ID]; ok {
		c.before[e.ID] = prev.Record
	} else {
		c.before[e.ID] = nil
	}
	c.latest[e.ID] = e
	c.all = append(c.all, e)
	c.n = e.Seq
	c.last = h
}

// next returns the event that would follow the chain.
func (c *chain) next(op, id string, record *string, now time.Time) event {
	return event{Seq: c.n + 1, Time: now.UTC(), Op: op, ID: id, Record: record, Prev: c.last}
}

// pinned reports whether id has a pin: events whose latest is not forget.
func (c *chain) pinned(id string) (event, bool) {
	e, ok := c.latest[id]
	return e, ok && e.Op != opForget
}

// An Event is one entry of the event chain, as History returns it.
type Event struct {
	Seq  int64
	Time time.Time
	// Op is pin, profile, drift, review, approve or forget.
	Op string
	ID string
	// By names who approved (approve events that recorded it).
	By string
}

// History returns the event chain's entries for the server ref names (an
// id or a unique label), oldest first. A broken chain is an error
// wrapping ErrTampered.
func (s *Store) History(ref string) ([]Event, error) {
	v, err := s.openChain()
	if err != nil {
		return nil, err
	}
	defer v.close()
	id, err := v.resolve(ref)
	if err != nil {
		return nil, err
	}
	var out []Event
	for _, e := range v.ch.all {
		if e.ID == id {
			out = append(out, Event{Seq: e.Seq, Time: e.Time, Op: e.Op, ID: e.ID, By: e.By})
		}
	}
	if out == nil {
		return nil, ErrNotFound
	}
	return out, nil
}
