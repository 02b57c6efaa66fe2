package tlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/canon"
	"github.com/mcpseal/mcpseal/contract"
)

// EntryType is the type member of every version 1 entry.
const EntryType = "mcpseal.observation/v1"

// MaxEntrySize is the largest entry: the bundle's length prefix is a
// uint16.
const MaxEntrySize = 1<<16 - 1

// maxDefName bounds a definition name in an entry, in bytes: real tool
// names are under 128 characters and URIs under a few hundred.
const maxDefName = 1024

// timeLayout is how entries write times: UTC, whole seconds.
const timeLayout = "2006-01-02T15:04:05Z"

// An Entry is one observation of a server's contract.
type Entry struct {
	// Server is the server's identity: "npm:<package>" or "local:<name>"
	// (see ValidServer).
	Server string
	// Package is the registry package and exact version, nil for local
	// servers.
	Package  *Package
	Observed time.Time
	// Since is the last time the previous contract was seen; zero in a
	// server's first entry.
	Since time.Time
	// Protocol is the protocol version the server spoke (YYYY-MM-DD).
	Protocol string
	Digests  contract.Digests
	// Definitions lists every definition's name and digest, by kind,
	// sorted as in a contract.
	Definitions map[contract.Kind][]DefRef
}

// A Package is the registry package a server came from.
type Package struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Integrity string `json:"integrity"`
}

// A DefRef names one definition and its digest.
type DefRef struct {
	Digest string `json:"digest"`
	Name   string `json:"name"`
}

// wireEntry is the JSON form of an Entry.
type wireEntry struct {
	Contract     string              `json:"contract"`
	Definitions  wireKinds[[]DefRef] `json:"definitions"`
	Instructions *string             `json:"instructions"`
	Observed     string              `json:"observed"`
	Package      *Package            `json:"package"`
	Protocol     string              `json:"protocol"`
	Server       string              `json:"server"`
	Sets         wireKinds[string]   `json:"sets"`
	Since        *string             `json:"since"`
	Type         string              `json:"type"`
}

type wireKinds[T any] struct {
	Prompts           T `json:"prompts"`
	ResourceTemplates T `json:"resourceTemplates"`
	Resources         T `json:"resources"`
	Tools             T `json:"tools"`
}

func (w *wireKinds[T]) get(k contract.Kind) *T {
	switch k {
	case contract.Tools:
		return &w.Tools
	case contract.Prompts:
		return &w.Prompts
	case contract.Resources:
		return &w.Resources
	}
	return &w.ResourceTemplates
}

// ErrMalformedEntry reports an entry that is not a canonical, consistent
// version 1 entry.
var ErrMalformedEntry = errors.New("tlog: malformed entry")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedEntry, fmt.Sprintf(format, args...))
}

// Marshal checks e and returns its canonical encoding.
func (e *Entry) Marshal() ([]byte, error) {
	w := wireEntry{
		Type: EntryType, Server: e.Server, Package: e.Package, Protocol: e.Protocol,
		Observed: e.Observed.UTC().Format(timeLayout), Contract: e.Digests.Contract,
		Instructions: e.Digests.Instructions,
	}
	if !e.Since.IsZero() {
		s := e.Since.UTC().Format(timeLayout)
		w.Since = &s
	}
	for _, k := range contract.Kinds {
		*w.Sets.get(k) = e.Digests.Sets[k]
		refs := e.Definitions[k]
		if refs == nil {
			refs = []DefRef{}
		}
		*w.Definitions.get(k) = refs
	}
	raw, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	b, err := canon.Transform(raw)
	if err != nil {
		return nil, err
	}
	if _, err := ParseEntry(b); err != nil {
		return nil, err
	}
	return b, nil
}

// ParseEntry parses an entry. It accepts only a canonical version 1 entry
// at most MaxEntrySize bytes whose digests are consistent, and proves the
// encoding canonical by encoding what it decoded and comparing.
func ParseEntry(b []byte) (*Entry, error) {
	if len(b) == 0 || len(b) > MaxEntrySize {
		return nil, malformed("size %d", len(b))
	}
	// encoding/json alone would take duplicate members, members that
	// match a field only when case is folded, and invalid UTF-8; the
	// comparison with the canonical re-encoding below refuses them all.
	var w wireEntry
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&w); err != nil {
		return nil, malformed("does not decode")
	}
	e, err := w.check()
	if err != nil {
		return nil, err
	}
	again, err := json.Marshal(w)
	if err != nil {
		return nil, malformed("does not encode")
	}
	if again, err = canon.Transform(again); err != nil || !bytes.Equal(again, b) {
		return nil, malformed("not the canonical encoding of its fields")
	}
	return e, nil
}

func (w *wireEntry) check() (*Entry, error) {
	if w.Type != EntryType {
		return nil, malformed("type")
	}
	if !ValidServer(w.Server) {
		return nil, malformed("server")
	}
	e := &Entry{Server: w.Server, Package: w.Package, Protocol: w.Protocol, Definitions: map[contract.Kind][]DefRef{}}
	npmName, isNPM := strings.CutPrefix(w.Server, "npm:")
	switch {
	case isNPM && (w.Package == nil || w.Package.Name != npmName):
		return nil, malformed("an npm server needs its package")
	case !isNPM && w.Package != nil:
		return nil, malformed("a local server has no package")
	case w.Package != nil && (!validVersion(w.Package.Version) || !validIntegrity(w.Package.Integrity)):
		return nil, malformed("package")
	case !validProtocol(w.Protocol):
		return nil, malformed("protocol")
	}
	var err error
	if e.Observed, err = parseTime(w.Observed); err != nil {
		return nil, err
	}
	if w.Since != nil {
		if e.Since, err = parseTime(*w.Since); err != nil {
			return nil, err
		}
		if e.Since.After(e.Observed) {
			return nil, malformed("since is after observed")
		}
	}
	if w.Instructions != nil && !isHexDigest(*w.Instructions) {
		return nil, malformed("instructions digest")
	}
	e.Digests = contract.Digests{Sets: map[contract.Kind]string{}, Instructions: w.Instructions}
	for _, k := range contract.Kinds {
		refs := *w.Definitions.get(k)
		if refs == nil {
			return nil, malformed("%s missing", k)
		}
		if err := checkRefs(refs); err != nil {
			return nil, malformed("%s: %v", k, err)
		}
		set := *w.Sets.get(k)
		if set != setDigest(k, refs) {
			return nil, malformed("%s set digest does not match its definitions", k)
		}
		e.Digests.Sets[k] = set
		e.Definitions[k] = refs
	}
	e.Digests.Contract = contractDigest(e.Digests.Sets, w.Instructions)
	if w.Contract != e.Digests.Contract {
		return nil, malformed("contract digest does not match")
	}
	return e, nil
}

func checkRefs(refs []DefRef) error {
	for i, r := range refs {
		if r.Name == "" || len(r.Name) > maxDefName || !isHexDigest(r.Digest) {
			return errors.New("definition name or digest")
		}
		if i > 0 && contract.CompareUTF16(refs[i-1].Name, r.Name) >= 0 {
			return errors.New("definitions not sorted by name, or a name twice")
		}
	}
	return nil
}

func setDigest(k contract.Kind, refs []DefRef) string {
	defs := make([]contract.Definition, len(refs))
	for i, r := range refs {
		defs[i] = contract.Definition{Kind: k, Name: r.Name, Digest: r.Digest}
	}
	return contract.SetDigest(defs)
}

// contractDigest follows docs/contract-digest.md from the set digests.
func contractDigest(sets map[contract.Kind]string, instructions *string) string {
	var b strings.Builder
	for _, k := range contract.Kinds {
		b.WriteString(string(k) + ":" + sets[k] + "\n")
	}
	b.WriteString("instructions:")
	if instructions == nil {
		b.WriteString("null")
	} else {
		b.WriteString(*instructions)
	}
	return sha256Hex([]byte(b.String()))
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil || t.Format(timeLayout) != s {
		return time.Time{}, malformed("time")
	}
	return t, nil
}
