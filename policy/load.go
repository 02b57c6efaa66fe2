package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"time"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// Policy is a checked host policy file. It is immutable and safe for
// concurrent use.
type Policy struct {
	source    string
	defaults  *rules
	servers   map[string]*rules // by server id
	names     map[string]string // server id -> key as written in the file
	providers map[string]*providerConfig
	audit     AuditSettings
	subjects  map[string]*subjectClass
}

// AuditSettings configure the audit log (see package audit).
type AuditSettings struct {
	// MaxFileBytes is the size at which the current log file is rotated.
	MaxFileBytes int64
	// MaxFiles is how many rotated files are kept.
	MaxFiles int
	// Required: when an event cannot be written, the operation it records
	// is refused (fail closed). When false, the failure is only logged.
	Required bool
}

// DefaultAuditSettings: 8 MiB files, 8 of them kept (about 300,000 events),
// and an operation that cannot be audited does not happen.
var DefaultAuditSettings = AuditSettings{MaxFileBytes: 8 << 20, MaxFiles: 8, Required: true}

// FileName is the policy file's name in mcpseal's home folder.
const FileName = "policy.json"

// DefaultPath is where the host policy lives: home/policy.json.
func DefaultPath(home string) string { return filepath.Join(home, FileName) }

// Default is the policy of a host that wrote none: every tool the contract
// check allows is shown and may be called, nothing asks a person, local
// servers pass, no provider is consulted, and the built-in limits apply.
func Default() *Policy {
	return &Policy{
		source:    "(built-in defaults)",
		defaults:  &rules{tools: map[string]*toolRules{}},
		servers:   map[string]*rules{},
		names:     map[string]string{},
		providers: map[string]*providerConfig{},
		audit:     DefaultAuditSettings,
	}
}

// Parse checks a policy file's bytes. name appears in errors (a file
// name). The error is a *FileError.
func Parse(name string, data []byte) (*Policy, error) {
	var f fileJSON
	pos, err := decodeFile(name, data, &f)
	if err != nil {
		return nil, err
	}
	c := &checker{w: &walker{name: name, data: data, pos: pos}}
	p, err := c.build(&f)
	if err != nil {
		return nil, err
	}
	p.source = name
	return p, nil
}

// Load reads and checks the policy file at path. It refuses a file that
// is not a regular file, is larger than 1 MiB, or (on Unix) may be written
// by other users: the policy is the host's authority over every server.
func Load(path string) (*Policy, error) {
	data, err := readPolicyFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// LoadDefault loads home/policy.json, or returns Default when there is no
// such file. Any other failure is an error: a policy that exists but cannot
// be read never falls back to the defaults.
func LoadDefault(home string) (*Policy, error) {
	p, err := Load(DefaultPath(home))
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	return p, err
}

// readPolicyFile reads the policy, a person's config: a final link is
// followed, but a FIFO or device is refused without blocking.
func readPolicyFile(path string) ([]byte, error) {
	f, err := atomicfile.OpenFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	case fi.Size() > maxPolicyBytes:
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxPolicyBytes)
	case runtime.GOOS != "windows" && fi.Mode().Perm()&0o022 != 0:
		return nil, fmt.Errorf("%s may be written by other users; run chmod go-w on it", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPolicyBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPolicyBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxPolicyBytes)
	}
	return data, nil
}

// Source names where the policy came from: its file, or "(built-in
// defaults)".
func (p *Policy) Source() string { return p.source }

// Audit returns the audit log settings.
func (p *Policy) Audit() AuditSettings { return p.audit }

// ServerKeys returns, for each server entry, its id and the key it was
// written under, for reports (mcpseal policy-check).
func (p *Policy) ServerKeys() map[string]string {
	m := make(map[string]string, len(p.names))
	for id, k := range p.names {
		m[id] = k
	}
	return m
}

// ProviderNames returns the configured providers' names, sorted.
func (p *Policy) ProviderNames() []string { return sortedKeys(p.providers) }

// ProviderKind returns the kind ("command" or "http") of the provider
// named name, or "".
func (p *Policy) ProviderKind(name string) string {
	if pc := p.providers[name]; pc != nil {
		return pc.kind
	}
	return ""
}

// nameID is the server id of a server named name (mcpseal run --name),
// the same as pin.IdentityForName(name).ID: the first 16 hex characters of
// SHA-256("name\x00" + name).
func nameID(name string) string {
	sum := sha256.Sum256([]byte("name\x00" + name))
	return hex.EncodeToString(sum[:8])
}

func isServerID(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// defaultProviderTimeout bounds one provider decision when the file does
// not say: long enough for a TLS round trip, short enough that a person
// waiting on a tool call does not give up.
const defaultProviderTimeout = 5 * time.Second
