package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/contract"
)

// recordVersion is the record file format version. Version 1 records
// (one pending change, no capabilities or protocol in a profile) still read:
// see upgradeV1.
const recordVersion = 2

// record is the content of pins/<id>.json (see the package doc).
type record struct {
	Version      int                        `json:"version"`
	ID           string                     `json:"id"`
	Label        string                     `json:"label"`
	Created      time.Time                  `json:"created"`
	Updated      time.Time                  `json:"updated"`
	Profiles     map[string]*profileEntry   `json:"profiles"`
	Pending      map[string]*pendingEntry   `json:"pending"`
	Reviewed     *reviewMark                `json:"reviewed"`
	Definitions  map[string]json.RawMessage `json:"definitions"`
	Instructions map[string]string          `json:"instructions"`
}

// contractEntry names a contract by its digests and its definitions by
// name and digest; the texts live in the record's content-addressed maps.
type contractEntry struct {
	Contract     string                            `json:"contract"`
	Sets         map[contract.Kind]string          `json:"sets"`
	Instructions *string                           `json:"instructions"`
	Definitions  map[contract.Kind][]definitionRef `json:"definitions"`
}

type definitionRef struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

// sessionFacts is what a profile entry and a pending entry keep of the
// session besides its contract.
type sessionFacts struct {
	// Capabilities are the capability names the client declared, each
	// escaped as in a profile key, sorted by bytes, no repeats; nil when
	// not known (a record of version 1, or more than the store keeps): see
	// declared.
	Capabilities []string `json:"capabilities"`
	// Protocol is the version the server agreed to (Observation.Protocol,
	// see normalizeProtocol); nil when not recorded (version 1).
	Protocol *string `json:"protocol"`
	// Fallback, in a profile: a person approved sessions of this profile
	// in which the server refused server/discover after it had spoken
	// 2026-07-28. In a pending entry: this change is such a session.
	Fallback bool `json:"fallback"`
}

type profileEntry struct {
	Pinned time.Time `json:"pinned"`
	// Origin says how the profile came to be pinned: "pin" (the server's
	// first pin, trust on first use), "approve" (a person approved it) or
	// "profile" (accepted by the new-profile rule). Empty for profiles of
	// earlier releases. See acceptProfile.
	Origin string `json:"origin,omitempty"`
	contractEntry
	sessionFacts
}

// Profile origins.
const (
	originPin     = "pin"
	originApprove = "approve"
	originProfile = "profile"
)

type pendingEntry struct {
	Detected time.Time `json:"detected"`
	contractEntry
	sessionFacts
	Base    contractEntry     `json:"base"`
	Changes []contract.Change `json:"changes"`
}

// reviewMark names the pending set a person reviewed by its review-set
// digest (see reviewSet).
type reviewMark struct {
	Digest string    `json:"digest"`
	Time   time.Time `json:"time"`
}

// texts holds definition and instruction texts by digest while a record is
// being changed.
type texts struct {
	defs  map[string]json.RawMessage
	instr map[string]string
}

// entryFor describes c, adding its texts to t.
func entryFor(c *contract.Contract, t *texts) (contractEntry, error) {
	d := c.Digests()
	e := contractEntry{
		Contract:     d.Contract,
		Sets:         maps.Clone(d.Sets),
		Instructions: d.Instructions,
		Definitions:  map[contract.Kind][]definitionRef{},
	}
	for _, k := range contract.Kinds {
		refs := []definitionRef{}
		for _, def := range c.Defs[k] {
			if def.Kind != k {
				return contractEntry{}, fmt.Errorf("a %s definition is listed under %s", def.Kind, k)
			}
			if !utf8.ValidString(def.Name) {
				return contractEntry{}, errors.New("a definition name is not valid UTF-8")
			}
			sum := sha256.Sum256(def.Canonical)
			if hex.EncodeToString(sum[:]) != def.Digest {
				return contractEntry{}, errors.New("a definition's digest does not match its canonical form")
			}
			refs = append(refs, definitionRef{Name: def.Name, Digest: def.Digest})
			t.defs[def.Digest] = json.RawMessage(def.Canonical)
		}
		e.Definitions[k] = refs
	}
	if c.Instructions != nil {
		if !utf8.ValidString(*c.Instructions) {
			return contractEntry{}, errors.New("the instructions are not valid UTF-8")
		}
		if d.Instructions == nil {
			return contractEntry{}, errors.New("the contract has instructions but no instructions digest")
		}
		t.instr[*d.Instructions] = *c.Instructions
	}
	return e, nil
}

// build returns the contract e describes, with texts from r, and checks
// that e's digests are the contract's.
func (r *record) build(e *contractEntry) (*contract.Contract, error) {
	c, err := r.buildUnchecked(e)
	if err != nil {
		return nil, err
	}
	d := c.Digests()
	if d.Contract != e.Contract || !maps.Equal(d.Sets, e.Sets) || !equalDigest(d.Instructions, e.Instructions) {
		return nil, errors.New("stored digests do not match the stored definitions")
	}
	return c, nil
}

// buildUnchecked returns the contract e's definitions and instructions
// make, with texts from r.
func (r *record) buildUnchecked(e *contractEntry) (*contract.Contract, error) {
	defs := make(map[contract.Kind][]contract.Definition, len(contract.Kinds))
	for k, refs := range e.Definitions {
		if !slices.Contains(contract.Kinds, k) {
			return nil, errors.New("unknown definition kind")
		}
		list := make([]contract.Definition, 0, len(refs))
		for _, ref := range refs {
			raw, ok := r.Definitions[ref.Digest]
			if !ok {
				return nil, errors.New("a definition's text is missing")
			}
			list = append(list, contract.Definition{Kind: k, Name: ref.Name, Digest: ref.Digest, Canonical: raw})
		}
		defs[k] = list
	}
	var instr *string
	if e.Instructions != nil {
		text, ok := r.Instructions[*e.Instructions]
		if !ok {
			return nil, errors.New("the instructions text is missing")
		}
		instr = &text
	}
	return contract.New(defs, instr), nil
}

func equalDigest(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// entries lists every contract the record mentions.
func (r *record) entries() []*contractEntry {
	var out []*contractEntry
	for _, key := range r.profileKeys() {
		out = append(out, &r.Profiles[key].contractEntry)
	}
	for _, key := range r.pendingKeys() {
		p := r.Pending[key]
		out = append(out, &p.contractEntry, &p.Base)
	}
	return out
}

// keepTexts sets the record's content-addressed maps to exactly the texts
// its contracts mention, taken from t.
func (r *record) keepTexts(t *texts) {
	r.Definitions = map[string]json.RawMessage{}
	r.Instructions = map[string]string{}
	for _, e := range r.entries() {
		for _, refs := range e.Definitions {
			for _, ref := range refs {
				r.Definitions[ref.Digest] = t.defs[ref.Digest]
			}
		}
		if e.Instructions != nil {
			r.Instructions[*e.Instructions] = t.instr[*e.Instructions]
		}
	}
}

// texts returns a copy of the record's content-addressed maps.
func (r *record) texts() *texts {
	return &texts{defs: maps.Clone(r.Definitions), instr: maps.Clone(r.Instructions)}
}

// encodeRecord returns the file bytes of r: compact JSON (indenting would
// rewrite the stored canonical definitions) and a final newline, exactly as
// json.Encoder with SetEscapeHTML(false) writes them.
//
// The definitions are nearly all of a large server's record (10 MB for
// 10,000 tools). Through encoding/json they would be copied three times
// into buffers that grow by doubling, 40 MB of garbage at the moment of the
// first pin, when the listing itself is still held. So the rest of the
// record is encoded by encoding/json, and the definitions are appended to
// one buffer sized for them, each validated and compacted by json.Compact
// as the encoder would (TestEncodeRecordIsTheEncoders).
func encodeRecord(r *record) ([]byte, error) {
	head := *r
	head.Definitions, head.Instructions = nil, nil
	h, err := encodeJSON(&head)
	if err != nil {
		return nil, err
	}
	const tail = `,"definitions":null,"instructions":null}` + "\n"
	rest, ok := bytes.CutSuffix(h, []byte(tail))
	if !ok || !hexKeys(r.Definitions) {
		return encodeJSON(r) // a layout this function does not know
	}
	size := len(rest) + len(tail) + 32
	for _, raw := range r.Definitions {
		size += len(raw) + 64 + 4
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	buf.Write(rest)
	buf.WriteString(`,"definitions":`)
	if r.Definitions == nil {
		buf.WriteString("null")
	} else {
		buf.WriteByte('{')
		for i, key := range slices.Sorted(maps.Keys(r.Definitions)) {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteByte('"')
			buf.WriteString(key)
			buf.WriteString(`":`)
			if raw := r.Definitions[key]; raw == nil {
				buf.WriteString("null")
			} else if err := json.Compact(buf, raw); err != nil {
				return nil, err
			}
		}
		buf.WriteByte('}')
	}
	buf.WriteString(`,"instructions":`)
	instr, err := encodeJSON(r.Instructions)
	if err != nil {
		return nil, err
	}
	buf.Write(instr[:len(instr)-1])
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}

// encodeJSON is json.Encoder's encoding of v with SetEscapeHTML(false),
// newline included.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// hexKeys reports whether every key of defs is lowercase hex, which JSON
// writes as is (a valid record's keys are the SHA-256 of their values).
func hexKeys(defs map[string]json.RawMessage) bool {
	for key := range defs {
		for i := range len(key) {
			if c := key[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// decodeRecord parses and checks a record file of server id. A record of
// version 1 is upgraded in memory (upgradeV1); it is written as version 2
// by the next change.
func decodeRecord(id string, data []byte) (*record, error) {
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, errors.New("record file does not parse")
	}
	var r *record
	switch head.Version {
	case recordVersion:
		r = new(record)
		if err := decodeStrict(data, r); err != nil {
			return nil, err
		}
	case 1:
		var v1 recordV1
		if err := decodeStrict(data, &v1); err != nil {
			return nil, err
		}
		if v1.Version != 1 {
			return nil, errors.New("record file does not parse")
		}
		r = v1.upgrade()
	default:
		return nil, errors.New("record file is malformed: unknown format version")
	}
	if err := r.check(id); err != nil {
		return nil, fmt.Errorf("record file is malformed: %v", err)
	}
	return r, nil
}

// decodeStrict decodes one JSON object into v, refusing unknown members
// and trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New("record file does not parse")
	}
	if dec.More() {
		return errors.New("record file has data after the record")
	}
	return nil
}

// check verifies everything a record says about itself.
func (r *record) check(id string) error {
	switch {
	case r.Version != recordVersion:
		return errors.New("unknown format version")
	case r.ID != id:
		return errors.New("it names another server")
	case r.Label == "":
		return errors.New("no label")
	case r.Profiles == nil:
		return errors.New("no profiles")
	case r.Pending == nil:
		return errors.New("no pending map")
	case len(r.Profiles) == 0 && len(r.Pending) == 0:
		return errors.New("no pinned profile and nothing pending")
	}
	empty := emptyEntry().Contract
	for digest, raw := range r.Definitions {
		sum := sha256.Sum256(raw)
		if hex.EncodeToString(sum[:]) != digest {
			return errors.New("a definition does not match its digest")
		}
	}
	for digest, text := range r.Instructions {
		sum := sha256.Sum256([]byte(text))
		if hex.EncodeToString(sum[:]) != digest {
			return errors.New("an instructions text does not match its digest")
		}
	}
	for key, p := range r.Profiles {
		if key == "" || p == nil {
			return errors.New("an empty profile")
		}
		if err := p.sessionFacts.check(); err != nil {
			return err
		}
	}
	for key, p := range r.Pending {
		switch {
		case key == "" || p == nil:
			return errors.New("an empty pending change")
		case len(r.Profiles) == 0 && p.Base.Contract != empty:
			return errors.New("a first contract awaiting approval compared with something other than the empty contract")
		}
		if err := p.sessionFacts.check(); err != nil {
			return err
		}
	}
	if m := r.Reviewed; m != nil && !isDigest(m.Digest) {
		return errors.New("a review mark without a digest")
	}
	for _, e := range r.entries() {
		if _, err := r.build(e); err != nil {
			return err
		}
	}
	return nil
}

// check verifies the form of what a profile or pending entry keeps of its
// session: what Observe would have written.
func (f *sessionFacts) check() error {
	if f.Capabilities != nil {
		if len(f.Capabilities) > maxStoredCapabilities || !slices.IsSorted(f.Capabilities) {
			return errors.New("capability names out of order or too many")
		}
		for i, c := range f.Capabilities {
			if u, ok := unescapeProfilePart(c); !ok || escapeProfilePart(u) != c || i > 0 && f.Capabilities[i-1] == c {
				return errors.New("a capability name is not in profile-key form")
			}
		}
	}
	if p := f.Protocol; p != nil && normalizeProtocol(*p) != *p {
		return errors.New("a protocol version is not in stored form")
	}
	return nil
}

// profileKeys returns the record's profile keys in order.
func (r *record) profileKeys() []string {
	return slices.Sorted(maps.Keys(r.Profiles))
}

// pendingKeys returns the profile keys of the pending changes in order.
func (r *record) pendingKeys() []string {
	return slices.Sorted(maps.Keys(r.Pending))
}
