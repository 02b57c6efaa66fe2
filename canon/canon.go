// Package canon implements the JSON Canonicalization Scheme of RFC 8785
// (JCS) and the SHA-256 digest mcpseal takes over it.
//
// Canonical JSON gives one byte sequence to every JSON value, whatever the
// whitespace, member order, string escapes or number spelling it was sent
// with, so two parties can hash what they received and compare digests:
//
//	input:     { "b" : [1.0, 1E3, "\u00e9\/"], "a": -0 }
//	canonical: {"a":0,"b":[1,1000,"é/"]}
//	digest:    SHA-256 of the canonical bytes, as 64 lowercase hex digits
//
// The rules, all from RFC 8785:
//
//   - No whitespace between tokens.
//   - Object members sorted by name, comparing the names as UTF-16 code
//     units (not UTF-8 bytes: the two orders differ between U+E000–U+FFFF
//     and the characters above U+FFFF), at every depth. Array order is kept.
//   - Strings: only `"` and `\` are escaped, U+0008, U+0009, U+000A, U+000C
//     and U+000D are written \b, \t, \n, \f and \r, every other character
//     below U+0020 is written \u00xx in lowercase hex, and everything else,
//     including "/", U+2028, U+2029 and all non-ASCII text, as raw UTF-8.
//   - Numbers are IEEE 754 doubles written the way ECMAScript's
//     Number.prototype.toString writes them: 1.0 is 1, 4.50 is 4.5, 1E30 is
//     1e+30, 1e-7 stays 1e-7, -0 is 0, and 12345678901234567890 is
//     12345678901234567000.
//   - The literals are true, false and null.
//
// RFC 8785 is defined over I-JSON (RFC 7493), and Transform enforces it
// rather than guessing: a member name repeated in one object (at any depth),
// invalid UTF-8, an escaped surrogate that is not part of a pair, and a
// number outside the range of a double are errors. A repeated name matters
// most: parsers disagree about which copy wins, so no single digest can stand
// for what every reader of the bytes sees.
//
// Errors never quote the input, which may be hostile or secret: they carry
// a sentinel (ErrInvalid, ErrDuplicateKey, ErrDepth), a byte offset and a
// fixed description.
//
// Language-neutral test vectors, including every example of RFC 8785, are
// in testdata/canon/vectors.json at the root of the module.
//
// The package imports only the standard library and knows nothing of MCP.
package canon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
)

// MaxDepth is the deepest nesting of arrays and objects Transform accepts.
// The parser recurses once per level, so the limit bounds its stack on
// hostile input; real MCP definitions (JSON Schemas included) nest a few
// dozen levels at most, so 512 leaves a wide margin without letting a
// server send a value that only some readers can parse.
const MaxDepth = 512

// Errors that callers branch on. Every error Transform returns is an *Error
// that wraps exactly one of them.
var (
	// ErrInvalid: the input is not one well-formed I-JSON value.
	ErrInvalid = errors.New("canon: invalid JSON")
	// ErrDuplicateKey: an object, at any depth, repeats a member name.
	ErrDuplicateKey = errors.New("canon: duplicate key")
	// ErrDepth: arrays and objects nest deeper than MaxDepth.
	ErrDepth = errors.New("canon: nesting too deep")
)

// An Error reports where and why an input has no canonical form. Its
// message never contains input text.
type Error struct {
	// Offset is the byte offset in the input where the problem was found.
	Offset int
	// Err is ErrInvalid, ErrDuplicateKey or ErrDepth.
	Err error
	// Detail is a fixed description of the problem ("invalid UTF-8"),
	// never derived from the input. It may be empty.
	Detail string
}

func (e *Error) Error() string {
	switch e.Err {
	case ErrDuplicateKey:
		return fmt.Sprintf("canon: duplicate key at offset %d", e.Offset)
	case ErrDepth:
		return fmt.Sprintf("canon: nesting deeper than %d at offset %d", MaxDepth, e.Offset)
	}
	if e.Detail == "" {
		return fmt.Sprintf("canon: invalid JSON at offset %d", e.Offset)
	}
	return fmt.Sprintf("canon: invalid JSON at offset %d: %s", e.Offset, e.Detail)
}

func (e *Error) Unwrap() error { return e.Err }

// Transform parses one JSON value (surrounding whitespace allowed, nothing
// else) and returns its RFC 8785 canonical form. The input size is the
// caller's to bound; the output is about as long as the input.
func Transform(raw []byte) ([]byte, error) {
	p := getParser()
	defer putParser(p)
	out, err := p.run(make([]byte, 0, len(raw)+16), raw)
	if err != nil {
		return nil, err
	}
	if cap(out) > len(out)+len(out)/4+64 {
		// Sized for the input, the output may be far shorter (whitespace,
		// escapes): a copy keeps only its bytes, since a contract holds
		// its canonical forms for the whole session (red team: 80 MiB of
		// padded definitions held for 40 small tools).
		out = bytes.Clone(out)
	}
	return out, nil
}

// IsCanonical reports whether raw is one JSON value in its canonical form
// exactly (Transform would return it unchanged). It allocates nothing once
// warm, for checks on a hot path.
func IsCanonical(raw []byte) bool {
	p := getParser()
	defer putParser(p)
	out, err := p.run(p.digestBuf[:0], raw)
	if out != nil {
		p.digestBuf = out
	}
	return err == nil && bytes.Equal(out, raw)
}

// Digest returns the SHA-256 of the canonical form of raw, as 64 lowercase
// hex digits.
func Digest(raw []byte) (string, error) {
	p := getParser()
	defer putParser(p)
	out, err := p.run(p.digestBuf[:0], raw)
	if out != nil {
		p.digestBuf = out
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(out)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:]), nil
}

// CompareUTF16 compares two strings the way RFC 8785 orders member names:
// as sequences of UTF-16 code units. It returns -1, 0 or +1. For valid
// UTF-8 it differs from a byte comparison only when a character above
// U+FFFF (a surrogate pair, D800–DFFF) meets one in U+E000–U+FFFF.
// Invalid UTF-8 still gets a consistent answer that is zero only for equal
// strings.
func CompareUTF16(a, b string) int { return compareUTF16(a, b) }

// maxPooled is the largest scratch buffer kept between calls, so that one
// huge input does not pin its memory for the life of the process.
const maxPooled = 1 << 20

var parsers = sync.Pool{New: func() any { return new(parser) }}

func getParser() *parser { return parsers.Get().(*parser) }

func putParser(p *parser) {
	if cap(p.digestBuf) > maxPooled {
		p.digestBuf = nil
	}
	if cap(p.tmp) > maxPooled {
		p.tmp = nil
	}
	if cap(p.keys) > maxPooled {
		p.keys = nil
	}
	if cap(p.members) > maxPooled/64 {
		p.members, p.order = nil, nil
	}
	parsers.Put(p)
}
