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

// recordVersion is the record file format version.
const recordVersion = 1

// record is the content of pins/<id>.json (see the package doc).
type record struct {
	Version      int                        `json:"version"`
	ID           string                     `json:"id"`
	Label        string                     `json:"label"`
	Created      time.Time                  `json:"created"`
	Updated      time.Time                  `json:"updated"`
	Profiles     map[string]*profileEntry   `json:"profiles"`
	Pending      *pendingEntry              `json:"pending"`
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

type profileEntry struct {
	Pinned time.Time `json:"pinned"`
	contractEntry
}

type pendingEntry struct {
	Profile  string    `json:"profile"`
	Detected time.Time `json:"detected"`
	contractEntry
	Base    contractEntry     `json:"base"`
	Changes []contract.Change `json:"changes"`
}

type reviewMark struct {
	Profile string    `json:"profile"`
	Digest  string    `json:"digest"`
	Time    time.Time `json:"time"`
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
	for _, key := range slices.Sorted(maps.Keys(r.Profiles)) {
		out = append(out, &r.Profiles[key].contractEntry)
	}
	if r.Pending != nil {
		out = append(out, &r.Pending.contractEntry, &r.Pending.Base)
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
// rewrite the stored canonical definitions) and a final newline.
func encodeRecord(r *record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeRecord parses and checks a record file of server id.
func decodeRecord(id string, data []byte) (*record, error) {
	var r record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, errors.New("record file does not parse")
	}
	if dec.More() {
		return nil, errors.New("record file has data after the record")
	}
	if err := r.check(id); err != nil {
		return nil, fmt.Errorf("record file is malformed: %v", err)
	}
	return &r, nil
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
	case len(r.Profiles) == 0 && r.Pending == nil:
		return errors.New("no pinned profile and nothing pending")
	case len(r.Profiles) == 0 && r.Pending.Base.Contract != emptyEntry().Contract:
		return errors.New("a first contract awaiting approval compared with something other than the empty contract")
	}
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
	}
	if p := r.Pending; p != nil && p.Profile == "" {
		return errors.New("a pending change without a profile")
	}
	for _, e := range r.entries() {
		if _, err := r.build(e); err != nil {
			return err
		}
	}
	return nil
}

// profileKeys returns the record's profile keys in order.
func (r *record) profileKeys() []string {
	return slices.Sorted(maps.Keys(r.Profiles))
}
