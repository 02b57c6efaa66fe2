package tlog

import (
	"encoding/base64"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/contract"
)

// maxServerName is npm's limit on a package name, which local names share.
const maxServerName = 214

// ValidServer reports whether s is a server identity: "npm:" followed by
// an npm package name, or "local:" followed by a name, either made of 1 to
// 214 of [A-Za-z0-9@/._~-]. Identities are safe to show anywhere.
func ValidServer(s string) bool {
	src, name, ok := strings.Cut(s, ":")
	if !ok || (src != "npm" && src != "local") || name == "" || len(name) > maxServerName {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isServerNameByte(name[i]) {
			return false
		}
	}
	return true
}

func isServerNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("@/._~-", c) >= 0
}

// validVersion accepts an exact semantic version as npm publishes it:
// 1 to 64 of [0-9A-Za-z.+-], starting with a digit.
func validVersion(v string) bool {
	if v == "" || len(v) > 64 || v[0] < '0' || v[0] > '9' {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}

// validIntegrity accepts one Subresource Integrity value with a SHA-512
// digest, as the npm registry's dist.integrity carries.
func validIntegrity(s string) bool {
	b64, ok := strings.CutPrefix(s, "sha512-")
	if !ok {
		return false
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(b64)
	return err == nil && len(raw) == 64 && base64.StdEncoding.EncodeToString(raw) == b64
}

func validProtocol(p string) bool {
	t, err := time.Parse("2006-01-02", p)
	return err == nil && t.Format("2006-01-02") == p
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// NewEntry makes the entry for an observation of c.
func NewEntry(server string, pkg *Package, observed, since time.Time, protocol string, c *contract.Contract) *Entry {
	e := &Entry{
		Server: server, Package: pkg, Observed: observed.UTC().Truncate(time.Second),
		Protocol: protocol, Digests: c.Digests(), Definitions: map[contract.Kind][]DefRef{},
	}
	if !since.IsZero() {
		e.Since = since.UTC().Truncate(time.Second)
	}
	for _, k := range contract.Kinds {
		refs := make([]DefRef, 0, len(c.Defs[k]))
		for _, d := range c.Defs[k] {
			refs = append(refs, DefRef{Name: d.Name, Digest: d.Digest})
		}
		e.Definitions[k] = refs
	}
	return e
}
