package pin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/contract"
)

// Identity names a server in the store.
type Identity struct {
	// ID is 16 lowercase hex characters (see the package doc).
	ID string
	// Label is a safe, human name for the server; it never holds raw argv
	// values beyond argv[0]'s base name.
	Label string
}

// IdentityForName is the identity of a server the user named.
func IdentityForName(name string) Identity {
	return Identity{ID: shortID("name\x00" + name), Label: contract.SafeName(name)}
}

// IdentityForProfile is the identity of a server launched by the launch
// profile name whose digest is profileDigest: a changed profile is a
// changed server, whose contract is pinned anew (and held under strict).
func IdentityForProfile(name, profileDigest string) Identity {
	return Identity{ID: shortID("profile\x00" + name + "\x00" + profileDigest), Label: contract.SafeName(name)}
}

// IdentityForArgv is the identity of a server known only by the command
// that starts it.
func IdentityForArgv(argv []string) Identity {
	return Identity{ID: shortID(argvInput(argv)), Label: argvLabel(argv)}
}

// argvInput is the text an argv identity hashes: "argv\x00" and the argv
// as a JSON array.
func argvInput(argv []string) string {
	var b strings.Builder
	b.WriteString("argv\x00[")
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(',')
		}
		appendJSONString(&b, a)
	}
	b.WriteByte(']')
	return b.String()
}

func shortID(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func argvLabel(argv []string) string {
	base := "_"
	if len(argv) > 0 {
		a := argv[0]
		if i := strings.LastIndexAny(a, `/\`); i >= 0 {
			a = a[i+1:]
		}
		base = contract.SafeName(a)
	}
	n := max(len(argv)-1, 0)
	if n == 1 {
		return base + " [1 arg]"
	}
	return fmt.Sprintf("%s [%d args]", base, n)
}

// appendJSONString writes s as a JSON string the way RFC 8785 does, and
// every byte that is not valid UTF-8 as \udcXX, which valid UTF-8 can
// never produce, so the encoding stays one-to-one.
func appendJSONString(b *strings.Builder, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\udc`)
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xf])
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xf])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// isID reports whether s has the form of a server id.
func isID(s string) bool {
	if len(s) != 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// isDigest reports whether s is 64 lowercase hex characters.
func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ProfileKey names what a listing may legitimately depend on: the protocol
// version and the set of capability names the client declared (the
// top-level keys of its capabilities object), for example
// "2025-06-18|elicitation,roots". Every byte outside ASCII letters, digits
// and "._-/:" is written as %XX (uppercase hex), so '|' and ',' only ever
// separate; the escaped names are sorted by bytes and repeats dropped. A
// key that would pass 256 bytes is replaced by "sha256:" and the hex
// SHA-256 of that key.
func ProfileKey(protocolVersion string, capabilityNames []string) string {
	names := make([]string, 0, len(capabilityNames))
	for _, n := range capabilityNames {
		names = append(names, escapeProfilePart(n))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	key := escapeProfilePart(protocolVersion) + "|" + strings.Join(names, ",")
	if len(key) > maxProfileKeyLen {
		sum := sha256.Sum256([]byte(key))
		key = "sha256:" + hex.EncodeToString(sum[:])
	}
	return key
}

// ParseProfileKey returns the protocol version and capability names a key
// made by ProfileKey names; ok is false for a hashed key ("sha256:...") or
// one ProfileKey cannot have made.
func ParseProfileKey(key string) (version string, capabilityNames []string, ok bool) {
	v, caps, found := strings.Cut(key, "|")
	if !found || strings.HasPrefix(key, "sha256:") {
		return "", nil, false
	}
	if version, ok = unescapeProfilePart(v); !ok {
		return "", nil, false
	}
	if caps != "" {
		for _, c := range strings.Split(caps, ",") {
			name, ok := unescapeProfilePart(c)
			if !ok {
				return "", nil, false
			}
			capabilityNames = append(capabilityNames, name)
		}
	}
	if ProfileKey(version, capabilityNames) != key {
		return "", nil, false
	}
	return version, capabilityNames, true
}

func unescapeProfilePart(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), true
}

func escapeProfilePart(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '.', c == '_', c == '-', c == '/', c == ':':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
	}
	return b.String()
}
