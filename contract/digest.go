package contract

// This file owns the contract's digests: mcpseal contract digest v1,
// specified in docs/contract-digest.md with vectors in
// testdata/contract/vectors.json. In short:
//
//	definition digest    SHA-256 of the RFC 8785 canonical form of the
//	                     definition object, every member included
//	set digest           SHA-256 of the lines "name:digest", sorted by name
//	                     (UTF-16 code units), ties by digest, joined by "\n"
//	instructions digest  SHA-256 of the instructions' UTF-8 bytes
//	contract digest      SHA-256 of
//	                       tools:<set>\nprompts:<set>\nresources:<set>\n
//	                       resourceTemplates:<set>\ninstructions:<digest|null>
//
// Definition and set digests are those of the "tool definition hash v1"
// that other pinning tools publish, so digests can be checked across tools;
// mcpseal is stricter about what has a digest (see the document's
// Compatibility section).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpseal/mcpseal/canon"
)

// Reasons a definition has no digest, carried in DefinitionError.Reason.
// They are stable codes that may appear in error data and audit events.
const (
	ReasonInvalidJSON  = "invalid-json"  // not one well-formed I-JSON value (also: nested too deep)
	ReasonDuplicateKey = "duplicate-key" // an object, at any depth, repeats a member name
	ReasonNotObject    = "not-object"    // valid JSON, but not an object
	ReasonNoName       = "no-name"       // the name member is missing, not a string, or empty
)

// A DefinitionError reports a definition that has no digest. A verifier
// must treat such a definition as matching no pin. Its message never
// contains the definition's text: the name, when shown, is reduced by
// SafeName.
type DefinitionError struct {
	Kind Kind
	// Name is the definition's name when it could be read unambiguously,
	// else empty. It is server text: pass it through SafeName before
	// showing it anywhere a model may read.
	Name string
	// Reason is one of the Reason* codes.
	Reason string
	// Err is the canon error behind invalid-json and duplicate-key, nil
	// otherwise.
	Err error
}

func (e *DefinitionError) Error() string {
	var b strings.Builder
	b.WriteString("contract: invalid ")
	b.WriteString(e.Kind.Singular())
	b.WriteString(" definition")
	if e.Name != "" {
		fmt.Fprintf(&b, " %q", SafeName(e.Name))
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	var ce *canon.Error
	if errors.As(e.Err, &ce) {
		fmt.Fprintf(&b, " at offset %d", ce.Offset)
		if ce.Detail != "" {
			fmt.Fprintf(&b, " (%s)", ce.Detail)
		}
	}
	return b.String()
}

func (e *DefinitionError) Unwrap() error { return e.Err }

// NewDefinition canonicalizes one definition of kind k exactly as the
// server sent it (raw must be a JSON object) and computes its digest. The
// error, if any, is a *DefinitionError.
func NewDefinition(k Kind, raw []byte) (Definition, error) {
	c, err := canon.Transform(raw)
	if err != nil {
		de := &DefinitionError{Kind: k, Reason: ReasonInvalidJSON, Err: err}
		if errors.Is(err, canon.ErrDuplicateKey) {
			de.Reason = ReasonDuplicateKey
			de.Name = nameDespiteDuplicates(k, raw)
		}
		return Definition{}, de
	}
	if c[0] != '{' {
		return Definition{}, &DefinitionError{Kind: k, Reason: ReasonNotObject}
	}
	name, ok := canonicalStringMember(c, k.NameMember())
	if !ok || name == "" {
		return Definition{}, &DefinitionError{Kind: k, Reason: ReasonNoName}
	}
	return Definition{Kind: k, Name: name, Digest: sha256Hex(c), Canonical: c}, nil
}

// New returns the contract made of defs and instructions. It copies each
// kind's definitions and sorts them by name (CompareUTF16), ties by
// digest; every kind in Kinds is present, possibly empty. Definitions
// under any other kind are a programming error, and New panics.
func New(defs map[Kind][]Definition, instructions *string) *Contract {
	c := &Contract{Defs: make(map[Kind][]Definition, len(Kinds))}
	for k := range defs {
		if !slices.Contains(Kinds, k) {
			panic(fmt.Sprintf("contract.New: unknown kind %q", string(k)))
		}
	}
	for _, k := range Kinds {
		ds := append([]Definition{}, defs[k]...)
		sortDefinitions(ds)
		c.Defs[k] = ds
	}
	if instructions != nil {
		s := *instructions
		c.Instructions = &s
	}
	return c
}

// Parse makes a contract from the raw definitions of each kind, in the
// order received, and the instructions (nil when the server sent none). It
// returns the first definition that has no digest, taking the kinds in
// the order of Kinds, as a *DefinitionError.
func Parse(raw map[Kind][][]byte, instructions *string) (*Contract, error) {
	for k := range raw {
		if !slices.Contains(Kinds, k) {
			return nil, fmt.Errorf("contract: unknown kind %q", string(k))
		}
	}
	defs := make(map[Kind][]Definition, len(Kinds))
	for _, k := range Kinds {
		ds := make([]Definition, 0, len(raw[k]))
		for _, r := range raw[k] {
			d, err := NewDefinition(k, r)
			if err != nil {
				return nil, err
			}
			ds = append(ds, d)
		}
		defs[k] = ds
	}
	return New(defs, instructions), nil
}

// SetDigest returns the set digest of a listing: the SHA-256 of one line
// "name:digest" per definition, sorted by name (CompareUTF16), ties by
// digest, joined by "\n" with no newline at the end. The order of defs does
// not matter. An empty listing hashes the empty string
// (e3b0c442...b855).
func SetDigest(defs []Definition) string {
	ds := slices.Clone(defs)
	sortDefinitions(ds)
	n := 0
	for _, d := range ds {
		n += len(d.Name) + 1 + len(d.Digest) + 1
	}
	text := make([]byte, 0, n)
	for i, d := range ds {
		if i > 0 {
			text = append(text, '\n')
		}
		text = append(text, d.Name...)
		text = append(text, ':')
		text = append(text, d.Digest...)
	}
	return sha256Hex(text)
}

// InstructionsDigest returns the SHA-256 of the instructions' UTF-8 bytes,
// exactly as decoded from the server's JSON, with no normalisation; nil
// when there are no instructions (which is not the digest of anything).
func InstructionsDigest(s *string) *string {
	if s == nil {
		return nil
	}
	d := sha256Hex([]byte(*s))
	return &d
}

// Digests returns the set digest of every kind, the instructions digest,
// and the contract digest: the SHA-256 of
//
//	tools:<set>
//	prompts:<set>
//	resources:<set>
//	resourceTemplates:<set>
//	instructions:<instructions digest, or null>
//
// joined by "\n" with no newline at the end.
func (c *Contract) Digests() Digests {
	d := Digests{Sets: make(map[Kind]string, len(Kinds)), Instructions: InstructionsDigest(c.Instructions)}
	var text strings.Builder
	for _, k := range Kinds {
		d.Sets[k] = SetDigest(c.Defs[k])
		text.WriteString(string(k) + ":" + d.Sets[k] + "\n")
	}
	text.WriteString("instructions:")
	if d.Instructions == nil {
		text.WriteString("null")
	} else {
		text.WriteString(*d.Instructions)
	}
	d.Contract = sha256Hex([]byte(text.String()))
	return d
}

// Lookup returns the definition of kind k called name. When a server
// listed two definitions under one name (which the gate refuses), it
// returns the first in contract order. c must have been made by New or
// Parse, which keep each kind sorted.
func (c *Contract) Lookup(k Kind, name string) (Definition, bool) {
	defs := c.Defs[k]
	i, found := slices.BinarySearchFunc(defs, name, func(d Definition, name string) int {
		return CompareUTF16(d.Name, name)
	})
	if !found {
		return Definition{}, false
	}
	return defs[i], true
}

// Len returns the number of definitions of every kind.
func (c *Contract) Len() int {
	n := 0
	for _, ds := range c.Defs {
		n += len(ds)
	}
	return n
}

// CompareUTF16 orders names as the digests do: by UTF-16 code units, the
// member order of RFC 8785. It returns -1, 0 or +1. It differs from Go's
// string comparison only between characters above U+FFFF and those in
// U+E000–U+FFFF ("\uff61" sorts after "\U0001F600").
func CompareUTF16(a, b string) int { return canon.CompareUTF16(a, b) }

// sortDefinitions sorts by name, ties by digest.
func sortDefinitions(ds []Definition) {
	slices.SortFunc(ds, func(x, y Definition) int {
		if c := CompareUTF16(x.Name, y.Name); c != 0 {
			return c
		}
		return strings.Compare(x.Digest, y.Digest)
	})
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:])
}

// canonicalStringMember returns the string value of the top-level member
// called name of the canonical object c (the output of canon.Transform),
// and false when there is no such member or its value is not a string.
// Canonical form makes this a plain scan: no whitespace, and inside
// strings a '"' is always escaped as \" and a backslash as \\.
func canonicalStringMember(c []byte, name string) (string, bool) {
	key := `"` + name + `"` // the names searched for need no escaping
	i := 1                  // past '{'
	for i < len(c) && c[i] != '}' {
		keyEnd := skipCanonical(c, i)
		valStart := keyEnd + 1 // past ':'
		valEnd := skipCanonical(c, valStart)
		if string(c[i:keyEnd]) == key {
			v := c[valStart:valEnd]
			if v[0] != '"' {
				return "", false
			}
			if bytes.IndexByte(v, '\\') < 0 {
				return string(v[1 : len(v)-1]), true
			}
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return "", false
			}
			return s, true
		}
		i = valEnd
		if i < len(c) && c[i] == ',' {
			i++
		}
	}
	return "", false
}

// skipCanonical returns the offset just past the canonical JSON value that
// starts at c[i].
func skipCanonical(c []byte, i int) int {
	depth := 0
	for i < len(c) {
		switch c[i] {
		case '"':
			i = skipCanonicalString(c, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // end of the enclosing object or array
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return i
}

// skipCanonicalString returns the offset just past the string at c[i].
func skipCanonicalString(c []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(c[i:], '"')
		if j < 0 {
			return len(c)
		}
		i += j
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for k := i - 1; c[k] == '\\'; k-- {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
}

// nameDespiteDuplicates reads, for an error message, the name of a
// definition that repeats a member name somewhere: the string value of its
// name member when that member appears exactly once at the top level, else
// "".
func nameDespiteDuplicates(k Kind, raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	name, seen := "", 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		if t == k.NameMember() {
			seen++
			if err := dec.Decode(&name); err != nil {
				return ""
			}
			continue
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return ""
		}
	}
	if seen != 1 {
		return ""
	}
	return name
}
