// Package lock owns mcpseal's team lock file, mcpseal.lock: the approved
// contracts and packages of a project's MCP servers, kept in the
// repository, reviewed like a dependency update and enforced from the
// first run.
//
// The format is specified in docs/lock-format.md (format version 1). In
// short, a lock is one deterministic, pretty-printed JSON file that maps
// each server name of the project's MCP config to an [Entry]:
//
//   - the command identity: the command, arguments, working folder and
//     environment names exactly as the config writes them (before ${VAR}
//     expansion), and their digest;
//   - the package pin (npm, PyPI or OCI; see package pkgpin), or null;
//   - every tool, prompt, resource and resource template definition in
//     full, with its digest, and the server's instructions with theirs;
//   - the set digests and the contract digest of docs/contract-digest.md;
//   - per definition, an approval record: the digest approved,
//     approved_by as typed (never verified), via (cli, pr...), ref and
//     time. A definition without one is pending.
//
// # Integrity
//
// [Parse] accepts only a lock that is exactly what mcpseal writes: every
// definition is re-hashed and compared with its digest, every set digest,
// the instructions digest, the contract digest and the command digest are
// recomputed, every approval must name its definition's digest, package
// pins must hold only plain versions (pkgpin.ValidVersion), and the file
// must re-encode to the same bytes. A lock edited by hand so that a
// definition and its digest disagree is refused ([ErrTampered]); so is an
// unknown format version ([ErrUnknownVersion]). Nothing ever falls back to
// no checking.
//
// # Enforcement
//
// The session gate asks the [Entry] of its server whether each listed
// definition is approved ([Entry.Approved], [Entry.Review]): a definition
// that is not is withheld from the model with a reason — new (not in the
// lock), changed (the lock has another digest), pending (in the lock, not
// approved) or duplicate (listed twice). [Events] writes one JSON line
// per listing and per refused call, with names, digests and counts only.
//
// # Signed manifests
//
// [Sign] writes a manifest beside the lock (mcpseal.lock.manifest): the
// lock's SHA-256, a sequence number that only grows, and an Ed25519
// signature in the SSH signature format (namespace "mcpseal-lock", so
// ssh-keygen -Y verify can check it too). A [HostConfig] that lives
// outside the repository names the trusted public keys and a sequence
// store; with one, [Load] refuses an unsigned lock, a signature by an
// untrusted key, a manifest whose digest does not match and an older
// sequence number than the host has seen.
//
// # Example
//
// A gate loads the lock once at start and asks about each definition:
//
//	host, _ := lock.LoadHostConfig(os.Getenv(lock.HostConfigEnv)) // optional
//	l, err := lock.Load("mcpseal.lock", host)
//	if err != nil { /* stop: fail closed */ }
//	e, ok := l.Entry("files")
//	if !ok { /* not in the lock: --only-locked refuses to start it */ }
//	ok, reason := e.Approved(contract.Tools, "read_file", d.Digest)
//	// ok false, reason "changed": withhold read_file from the listing
package lock

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/pkgpin"
)

// FormatVersion is the lock format this package reads and writes.
const FormatVersion = 1

// FileName is the lock's conventional name, in the repository root.
const FileName = "mcpseal.lock"

// Errors callers branch on.
var (
	// ErrTampered: the lock does not agree with itself (a digest that does
	// not match its definition, an approval for another digest, a file
	// that is not in mcpseal's form).
	ErrTampered = errors.New("lock: the lock file fails its integrity check")
	// ErrUnknownVersion: the lock is of a format version this mcpseal does
	// not read.
	ErrUnknownVersion = errors.New("lock: unknown lock format version")
	// ErrNotFound: no server, definition or approval of that name.
	ErrNotFound = errors.New("lock: not found")
)

// Lock is a whole lock file.
type Lock struct {
	Version int               `json:"version"`
	Servers map[string]*Entry `json:"servers"`
}

// New returns an empty lock.
func New() *Lock { return &Lock{Version: FormatVersion, Servers: map[string]*Entry{}} }

// Entry returns the entry of the server called name.
func (l *Lock) Entry(name string) (*Entry, bool) {
	e, ok := l.Servers[name]
	return e, ok
}

// Names returns the server names, sorted.
func (l *Lock) Names() []string {
	names := make([]string, 0, len(l.Servers))
	for n := range l.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Entry is what the lock holds for one server.
type Entry struct {
	Command Command `json:"command"`
	// Package is the pinned package, nil when the command is not a
	// registry launch or the entry is DefinitionsOnly.
	Package *pkgpin.Package `json:"package"`
	// DefinitionsOnly records a deliberate choice to lock a registry
	// launch's definitions without its package (for a package the
	// registry will not show without credentials, or an image not pinned
	// by digest). lock --check notes it; it does not fail.
	DefinitionsOnly bool          `json:"definitions_only,omitempty"`
	Digests         Digests       `json:"contract"`
	Instructions    *Instructions `json:"instructions"`
	Tools           []*Definition `json:"tools"`
	Prompts         []*Definition `json:"prompts"`
	Resources       []*Definition `json:"resources"`
	Templates       []*Definition `json:"resourceTemplates"`
	contract        *contract.Contract
}

// Digests are an entry's set digests and contract digest, each
// "sha256:" and 64 lowercase hex digits.
type Digests struct {
	Digest string            `json:"digest"`
	Sets   map[string]string `json:"sets"`
}

// Definition is one locked definition, in full.
type Definition struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
	// Approval is nil while the definition is pending.
	Approval *Approval `json:"approval"`
	// Definition is the definition object exactly as the server sent it
	// (in canonical form; the file shows it indented).
	Definition json.RawMessage `json:"definition"`
}

// Instructions are the server's instructions, in full.
type Instructions struct {
	Text     string    `json:"text"`
	Digest   string    `json:"digest"`
	Approval *Approval `json:"approval"`
}

// Approval records who approved which digest, how and when. ApprovedBy
// is recorded as typed and never verified: in a pull request it is the
// author's claim; the merge commit and the manifest signature record who
// approved.
type Approval struct {
	Digest     string `json:"digest"`
	ApprovedBy string `json:"approved_by"`
	Via        string `json:"via"`
	Ref        string `json:"ref,omitempty"`
	// Time is RFC 3339 in UTC, to the second.
	Time string `json:"time"`
}

// Defs returns the entry's definitions of kind k (nil for an unknown
// kind).
func (e *Entry) Defs(k contract.Kind) []*Definition {
	switch k {
	case contract.Tools:
		return e.Tools
	case contract.Prompts:
		return e.Prompts
	case contract.Resources:
		return e.Resources
	case contract.ResourceTemplates:
		return e.Templates
	}
	return nil
}

func (e *Entry) setDefs(k contract.Kind, defs []*Definition) {
	switch k {
	case contract.Tools:
		e.Tools = defs
	case contract.Prompts:
		e.Prompts = defs
	case contract.Resources:
		e.Resources = defs
	case contract.ResourceTemplates:
		e.Templates = defs
	}
}

// Lookup returns the definition of kind k called name.
func (e *Entry) Lookup(k contract.Kind, name string) (*Definition, bool) {
	for _, d := range e.Defs(k) {
		if d.Name == name {
			return d, true
		}
	}
	return nil, false
}

// KindsOf returns the kinds that have a definition called name.
func (e *Entry) KindsOf(name string) []contract.Kind {
	var ks []contract.Kind
	for _, k := range contract.Kinds {
		if _, ok := e.Lookup(k, name); ok {
			ks = append(ks, k)
		}
	}
	return ks
}

// Contract returns every locked definition and the instructions, approved
// or not, as a contract (for diffs against what a server serves now).
func (e *Entry) Contract() *contract.Contract { return e.contract }

// Approved reports whether the definition is approved.
func (d *Definition) Approved() bool { return d.Approval != nil && d.Approval.Digest == d.Digest }

// Approved reports whether the instructions are approved.
func (in *Instructions) Approved() bool {
	return in != nil && in.Approval != nil && in.Approval.Digest == in.Digest
}

// prefixed returns "sha256:" + hex.
func prefixed(hex string) string { return "sha256:" + hex }

// bare strips an optional "sha256:" prefix.
func bare(d string) string { return strings.TrimPrefix(d, "sha256:") }
