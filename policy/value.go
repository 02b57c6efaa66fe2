package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/canon"
)

// This file decodes untrusted JSON for validation so that what is
// validated is what every reader of the forwarded bytes sees. The gate
// forwards the original bytes; the validator sees a decoded copy. The two
// must not disagree, so a value is refused when readers could:
//
//   - a member name repeated in one object, at any depth (parsers differ on
//     which copy wins), invalid UTF-8, a lone surrogate escape: canon
//     refuses all of these, as RFC 8785 requires I-JSON;
//   - two member names in one object that are equal up to case folding
//     ({"path": "/ok", "PATH": "/etc/passwd"}): Go's encoding/json and other
//     case-insensitive decoders bind both to one field, and the last wins,
//     while a schema checks "path" alone.
//
// Numbers are kept as json.Number and decoded from the bytes as sent (not
// from their canonical form, which rounds every number to a double), so
// that 9007199254740993 is validated as written, not as 9007199254740992.

var (
	errNotIJSON  = errors.New("not one I-JSON value")
	errAmbiguous = errors.New("two member names in one object differ only in case")
	errNotObject = errors.New("not a JSON object")
)

// checkIJSON refuses raw unless it is one I-JSON value: no repeated
// member names, valid UTF-8, no lone surrogate, numbers within a double's
// range.
func checkIJSON(raw []byte) error {
	if _, err := canon.Transform(raw); err != nil {
		return errNotIJSON
	}
	return nil
}

// decodeValue decodes one value that checkIJSON accepted (or a member of
// one), refusing case-folded member name collisions.
func decodeValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errNotIJSON
	}
	if foldCollision(v, 0) {
		return nil, errAmbiguous
	}
	return v, nil
}

// topMembers decodes the members of an object that checkIJSON accepted,
// exactly as named, and refuses it when a name in want collides with
// another name by case.
func topMembers(c []byte, want ...string) (map[string]json.RawMessage, error) {
	c = bytes.TrimLeft(c, " \t\r\n")
	if len(c) == 0 || c[0] != '{' {
		return nil, errNotObject
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(c, &m); err != nil {
		return nil, errNotIJSON
	}
	for k := range m {
		for _, w := range want {
			if k != w && strings.EqualFold(k, w) {
				return nil, errAmbiguous
			}
		}
	}
	return m, nil
}

// maxFoldDepth bounds the walk; canon already bounds nesting at 512.
const maxFoldDepth = canon.MaxDepth

// foldCollision reports whether any object in v has two member names
// that are equal under Unicode simple case folding (strings.EqualFold).
func foldCollision(v any, depth int) bool {
	if depth > maxFoldDepth {
		return true
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 1 {
			seen := make(map[string]struct{}, len(x))
			for k := range x {
				f := FoldKey(k)
				if _, dup := seen[f]; dup {
					return true
				}
				seen[f] = struct{}{}
			}
		}
		for _, e := range x {
			if foldCollision(e, depth+1) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if foldCollision(e, depth+1) {
				return true
			}
		}
	}
	return false
}

// FoldKey maps s to a representative of its case-folding class: every
// rune becomes the smallest rune of its unicode.SimpleFold orbit, written
// in lower case when that is an ASCII letter (the orbit of 'k' holds 'K',
// 'k' and the Kelvin sign; its key is 'k'), so FoldKey(a) == FoldKey(b)
// exactly when strings.EqualFold(a, b). ASCII without capitals maps to
// itself, without allocating.
func FoldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		if 'A' <= low && low <= 'Z' {
			low += 'a' - 'A'
		}
		b.WriteRune(low)
	}
	return b.String()
}

// canonicalMember returns the raw value of the top-level member name of
// the canonical JSON object c, or nil. It scans without decoding, which
// keeps a hot path (annotations of every call) allocation free. name must
// not contain '"', '\\' or a character below U+0020: canonical JSON
// escapes no other character, so such a name matches its key byte for
// byte.
//
// Canonical keys come sorted (by UTF-16 code units), so when name is ASCII
// above '\\' (lowercase names such as "annotations") the scan
// stops at the first key whose bytes sort after name's: a key's bytes and
// its characters then order the same against name. (An escape starts with
// '\\' and stands for a character below U+0020, '"' or '\\', all below
// name's bytes; a UTF-8 sequence stands for a character above U+007F,
// above them. Between two characters above U+007F, UTF-8 and UTF-16 order
// differ, hence ASCII.) FuzzCanonicalMember holds it to decoding. Its
// inputs are canonical: contract.NewDefinition's, and a pin record's,
// which mcpseal wrote from them and the event chain guards. Were keys ever
// unsorted, a missed "annotations" reads as no hints: destructive, so a
// call is confirmed, not waved through.
func canonicalMember(c []byte, name string) []byte {
	if len(c) < 2 || c[0] != '{' {
		return nil
	}
	stops := true
	for i := 0; i < len(name); i++ {
		if name[i] <= '\\' || name[i] >= utf8.RuneSelf {
			stops = false
		}
	}
	for i := 1; i < len(c) && c[i] == '"'; {
		kEnd := skipJSONString(c, i)
		if kEnd < 0 || kEnd >= len(c) || c[kEnd] != ':' {
			return nil
		}
		key := c[i+1 : kEnd-1]
		if stops && string(key) > name {
			return nil
		}
		vStart := kEnd + 1
		vEnd := skipJSONValue(c, vStart)
		if vEnd < 0 {
			return nil
		}
		if string(key) == name {
			return c[vStart:vEnd]
		}
		i = vEnd
		if i < len(c) && c[i] == ',' {
			i++
		}
	}
	return nil
}

// skipJSONString returns the index just past the string starting at c[i],
// or -1.
func skipJSONString(c []byte, i int) int {
	if i >= len(c) || c[i] != '"' {
		return -1
	}
	for j := i + 1; j < len(c); j++ {
		switch c[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipJSONValue returns the index just past the canonical value starting
// at c[i], or -1.
func skipJSONValue(c []byte, i int) int {
	if i >= len(c) {
		return -1
	}
	switch c[i] {
	case '"':
		return skipJSONString(c, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(c); j++ {
			switch c[j] {
			case '"':
				e := skipJSONString(c, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(c) && c[j] != ',' && c[j] != '}' && c[j] != ']' {
		j++
	}
	return j
}
