package launch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpseal/mcpseal/canon"
)

// FormatVersion is the profile format this package reads and writes.
const FormatVersion = 1

// MaxProfileSize bounds a profile file. Why 1 MiB: a profile is a few
// kilobytes (one argv, a few dozen paths); a megabyte leaves room for long
// argument lists while keeping a hostile file from costing much to parse.
const MaxProfileSize = 1 << 20

// A Profile pins exactly what is launched for one stdio server and how it
// is confined. Its JSON form is specified in docs/launch-profiles.md.
type Profile struct {
	Version    int        `json:"version"`
	Name       string     `json:"name"`
	Executable Executable `json:"executable"`
	// Tree is the package tree the executable runs (a node or python
	// server's package folder); nil for a self-contained binary.
	Tree       *Tree      `json:"tree"`
	Argv       []string   `json:"argv"`
	Cwd        string     `json:"cwd"`
	Env        Env        `json:"env"`
	Limits     Limits     `json:"limits"`
	Filesystem Filesystem `json:"filesystem"`
	Network    Network    `json:"network"`
	// Require lists the confinements that must be enforced; a launch
	// where one of them cannot be enforced is refused.
	Require []Confinement `json:"require"`
}

// Executable is the file that is executed, by absolute path, and the
// SHA-256 of its bytes ("sha256:" and 64 lowercase hex digits).
type Executable struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Tree is a folder whose every file is pinned by one directory digest in
// Go's dirhash "h1:" format (see TreeDigest).
type Tree struct {
	Path   string `json:"path"`
	Digest string `json:"digest"`
}

// Env is the server's whole environment: nothing else of mcpseal's
// environment reaches it.
type Env struct {
	// Pass names variables whose values are taken from mcpseal's
	// environment at launch, after verification.
	Pass []string `json:"pass"`
	// Set holds variables whose values the profile fixes.
	Set map[string]string `json:"set"`
}

// Limits bound the server. Every limit is finite and positive.
type Limits struct {
	StartupMS     int64 `json:"startup_ms"`      // first answer after the first request
	RequestMS     int64 `json:"request_ms"`      // each request until its answer
	StdoutBytes   int64 `json:"stdout_bytes"`    // everything the server writes to stdout
	StderrBytes   int64 `json:"stderr_bytes"`    // everything passed through from stderr
	MemoryBytes   int64 `json:"memory_bytes"`    // private writable memory per process (RLIMIT_DATA)
	CPUSeconds    int64 `json:"cpu_seconds"`     // CPU time per process (RLIMIT_CPU)
	Processes     int64 `json:"processes"`       // tasks (processes and threads) at once
	OpenFiles     int64 `json:"open_files"`      // descriptors per process (RLIMIT_NOFILE)
	FileSizeBytes int64 `json:"file_size_bytes"` // largest file written (RLIMIT_FSIZE)
}

// Filesystem lists what the server may read and write; everything else
// is neither readable nor writable.
type Filesystem struct {
	ReadOnly  []string `json:"read_only"`
	ReadWrite []string `json:"read_write"`
}

// NetworkMode is the network policy.
type NetworkMode string

const (
	// NetworkNone: an empty network namespace; no socket reaches anything.
	NetworkNone NetworkMode = "none"
	// NetworkLoopback: a network namespace of its own with only lo up;
	// the server reaches only itself.
	NetworkLoopback NetworkMode = "loopback"
	// NetworkEgress: lo only, plus one route out: mcpseal's CONNECT proxy,
	// which lets through only the hosts in Allow.
	NetworkEgress NetworkMode = "egress"
)

// Network is the network policy.
type Network struct {
	Mode NetworkMode `json:"mode"`
	// Allow lists "host:port" destinations for egress mode.
	Allow []string `json:"allow"`
}

// ErrProfile is wrapped by every error about a profile's contents.
var ErrProfile = errors.New("invalid launch profile")

// ParseProfile reads a profile. It accepts exactly one encoding per
// meaning (any whitespace and member order, but no unknown or repeated
// member, no null for a list, no list out of order or with repeats), which
// it proves by re-encoding: the canonical form of the input must equal the
// canonical form of the profile it decoded. Errors never quote the input.
func ParseProfile(data []byte) (*Profile, error) {
	if len(data) > MaxProfileSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrProfile, MaxProfileSize)
	}
	want, err := canon.Transform(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProfile, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	p := new(Profile)
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrProfile, decodeProblem(err))
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	got, err := p.canonical()
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(got, want) {
		return nil, fmt.Errorf("%w: not in canonical form (a member missing, a null list, a list out of order or with repeats, a number not written as an integer, or a member name in the wrong case); 'mcpseal profile show' prints the form it expects", ErrProfile)
	}
	return p, nil
}

// decodeProblem describes a decoding error without quoting the input.
func decodeProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("member %q has the wrong type (want %s)", te.Field, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("not JSON at offset %d", se.Offset)
	}
	if bytes.HasPrefix([]byte(err.Error()), []byte("json: unknown field")) {
		return "unknown member"
	}
	return "not a profile object"
}

// Marshal returns the profile's canonical JSON (RFC 8785), the form that
// is written to disk and hashed.
func (p *Profile) Marshal() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p.canonical()
}

// MarshalIndent returns the canonical form with indentation, for files a
// person may read. It parses back to the same profile and digest.
func (p *Profile) MarshalIndent() ([]byte, error) {
	c, err := p.Marshal()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, c, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// Digest is the profile's identity: "sha256:" and the SHA-256 of its RFC
// 8785 canonical form. A changed profile is a changed server.
func (p *Profile) Digest() (string, error) {
	c, err := p.Marshal()
	if err != nil {
		return "", err
	}
	d, err := canon.Digest(c)
	if err != nil {
		return "", err
	}
	return "sha256:" + d, nil
}

func (p *Profile) canonical() ([]byte, error) {
	q := *p
	q.Argv = nonNil(q.Argv)
	q.Env.Pass = nonNil(q.Env.Pass)
	if q.Env.Set == nil {
		q.Env.Set = map[string]string{}
	}
	q.Filesystem.ReadOnly = nonNil(q.Filesystem.ReadOnly)
	q.Filesystem.ReadWrite = nonNil(q.Filesystem.ReadWrite)
	q.Network.Allow = nonNil(q.Network.Allow)
	q.Require = nonNil(q.Require)
	raw, err := json.Marshal(&q)
	if err != nil {
		return nil, err
	}
	return canon.Transform(raw)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
