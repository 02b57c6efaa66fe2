package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/contract"
)

// Field bounds. Together they keep a line under 1.5 KiB, far below
// maxLineBytes.
const (
	maxLabelLen = 80 // a SafeName label plus " [N args]"
	maxCodeLen  = 64 // stage, code, provider
	// maxLineBytes bounds one line when reading: four times the longest
	// line this package writes.
	maxLineBytes = 8 << 10
)

// zeroHash is the prev of event 1.
var zeroHash = strings.Repeat("0", 64)

// prepare checks e and reduces its text fields, for writing as event seq
// after prev.
func prepare(e Event, seq int64, prev string) (Event, error) {
	return prepareSeen(e, seq, prev, nil)
}

// prepareSeen is prepare with what a Log saw before (nil: nothing).
func prepareSeen(e Event, seq int64, prev string, sn *seen) (Event, error) {
	switch e.Op {
	case OpConnect, OpList, OpCall, OpConfirm, OpDrift, OpWithhold, OpPrune, OpGap:
	default:
		return e, invalid("unknown operation")
	}
	switch e.Outcome {
	case Allowed, Warned, Refused, Withheld, Asked, Accepted, Declined, Failed, Noted:
	default:
		return e, invalid("unknown outcome")
	}
	if e.Server != "" && !sn.check(seenServer, e.Server, func(s string) bool { return isHex(s, 16) }) {
		return e, invalid("server is not a 16-hex id")
	}
	for i, d := range [...]string{e.Digest, e.Contract, e.Receipt, e.JTI} {
		if d != "" && !sn.check(seenDigest+i, d, isDigest) {
			return e, invalid("a digest is not 64 lowercase hex characters")
		}
	}
	if e.Count < 0 || e.Bytes < 0 || e.Millis < 0 {
		return e, invalid("a negative count, size or duration")
	}
	if e.Anchor != nil && (e.Anchor.Seq < 1 || !isHex(e.Anchor.Hash, 64)) {
		return e, invalid("a malformed anchor")
	}
	e.V, e.Seq, e.Prev = 1, seq, prev
	e.Time = e.Time.UTC()
	if e.Tool != "" {
		e.Tool = sn.reduce(seenTool, e.Tool, contract.SafeName)
	}
	e.Label = sn.reduce(seenLabel, e.Label, reduceLabel)
	e.Stage = sn.reduce(seenStage, e.Stage, reduceCode)
	e.Code = sn.reduce(seenCode, e.Code, reduceCode)
	e.Provider = sn.reduce(seenProvider, e.Provider, reduceCode)
	e.Subject = sn.reduce(seenSubject, e.Subject, ReduceSubject)
	e.Issuer = sn.reduce(seenIssuer, e.Issuer, reduceIssuer)
	e.Client = sn.reduce(seenClient, e.Client, ReduceSubject)
	return e, nil
}

func isDigest(s string) bool       { return isHex(s, 64) }
func reduceLabel(s string) string  { return reduce(s, maxLabelLen, " []") }
func reduceCode(s string) string   { return reduce(s, maxCodeLen, "") }
func reduceIssuer(s string) string { return reduce(s, maxIssuerLen, "") }

// seen remembers, per field, the last value that passed a check or that
// reducing left as it was. A session writes the same server, label,
// tool, digests and codes on every event, and comparing a string with the
// one before (most often the same bytes at the same address, which Go
// compares at once) costs less than reading it again. A value that
// differs is checked in full. Only the Log's own goroutine, under its
// lock, uses one; a nil *seen remembers nothing.
type seen struct{ v [seenFields]string }

// The fields seen tracks: prepare's checks and reductions, then
// appendLine's plain-string test, each for its own fields.
const (
	seenServer = iota
	seenDigest // and Contract, Receipt, JTI after it
	_
	_
	_
	seenTool
	seenLabel
	seenStage
	seenCode
	seenProvider
	seenSubject
	seenIssuer
	seenClient
	seenPlain  // appendLine's strings, in its order
	seenFields = seenPlain + plainFields
)

// check reports ok(s), from memory when s is the value field last passed
// with.
func (sn *seen) check(field int, s string, ok func(string) bool) bool {
	if sn != nil && s == sn.v[field] && s != "" {
		return true
	}
	if !ok(s) {
		return false
	}
	if sn != nil {
		sn.v[field] = s
	}
	return true
}

// reduce is reduced(s), which is s itself when s is the value field last
// reduced to itself.
func (sn *seen) reduce(field int, s string, reduced func(string) string) string {
	if s == "" || sn != nil && s == sn.v[field] {
		return s
	}
	r := reduced(s)
	if sn != nil && r == s {
		sn.v[field] = s
	}
	return r
}

// maxSubjectLen bounds a subject or client id.
const maxSubjectLen = 128

// ReduceSubject is a caller's subject or client id as the log writes it:
// ASCII letters, digits and _.:/~-@+, every other rune '_', at most 128.
// Filters (audit tail --subject) compare reduced forms.
//
// Reducing is not one to one ("alice smith" and "alice_smith"), so a value
// that reducing would change, or that holds the "~" that marks the digest,
// is written as its reduced start, "~" and the first 12 hex digits of the
// SHA-256 of the value as sent: two callers are never written alike.
func ReduceSubject(s string) string {
	if s == "" || kept(s, maxSubjectLen, "@+") && !strings.Contains(s, "~") {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return reduce(s, maxSubjectLen-13, "@+") + "~" + hex.EncodeToString(sum[:6])
}

// writtenSubject reports whether s is a form ReduceSubject writes: empty,
// a value it keeps as it is (no "~"), or a reduced start, "~" and 12
// lowercase hex digits.
func writtenSubject(s string) bool {
	if s == "" || kept(s, maxSubjectLen, "@+") && !strings.Contains(s, "~") {
		return true
	}
	n := len(s) - 13
	return n >= 0 && s[n] == '~' && isHex(s[n+1:], 12) && kept(s[:n], maxSubjectLen-13, "@+")
}

// maxIssuerLen bounds an issuer (a URL).
const maxIssuerLen = 256

// reduce keeps ASCII letters, digits, _.:/~- and the runes in extra,
// replaces every other rune with '_' and cuts s to limit runes.
func reduce(s string, limit int, extra string) string {
	if s == "" {
		return ""
	}
	if kept(s, limit, extra) {
		return s // the usual case, for every event: no copy
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == limit {
			break
		}
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9',
			strings.ContainsRune("_.:/~-", r), strings.ContainsRune(extra, r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		n++
	}
	return b.String()
}

// kept reports whether reduce would return s as it is: at most limit
// bytes, each one reduce keeps.
func kept(s string, limit int, extra string) bool {
	if len(s) > limit {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("_.:/~-", c) >= 0 || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// encode returns e's line, without the newline: encoding/json's bytes
// (encodeJSON), written by hand for the events a session writes on every
// call (appendLine; TestEncodeMatchesEncodingJSON and FuzzEncode hold the
// two to the same bytes), and by encoding/json for anything else.
func encode(e *Event) ([]byte, error) { return encodeTo(make([]byte, 0, 320), e, nil) }

// encodeTo is encode appending to dst, with what a Log saw before (nil:
// nothing).
func encodeTo(dst []byte, e *Event, sn *seen) ([]byte, error) {
	if line, ok := appendLine(dst, e, sn); ok {
		return line, nil
	}
	ev := *e // e itself does not escape: a call's events stay on the stack
	line, err := encodeJSON(&ev)
	if err != nil {
		return nil, err
	}
	return append(dst, line...), nil
}

// appendLine appends e as encoding/json writes it, for an event whose
// strings need no escaping and whose time encoding/json writes as
// RFC 3339; ok is false for any other.
func appendLine(b []byte, e *Event, sn *seen) ([]byte, bool) {
	if e.Anchor != nil || e.Time.Year() < 0 || e.Time.Year() > 9999 {
		return nil, false
	}
	for i, s := range [plainFields]string{string(e.Op), string(e.Outcome), e.Server, e.Label, e.Tool, e.Stage, e.Code, e.Provider, e.Digest, e.Contract, e.Receipt, e.Subject, e.Issuer, e.Client, e.JTI, e.Prev} {
		if !sn.check(seenPlain+i, s, plainString) {
			return nil, false
		}
	}
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(e.V), 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","op":"`...)
	b = append(b, e.Op...)
	b = append(b, `","outcome":"`...)
	b = append(b, e.Outcome...)
	b = append(b, '"')
	for _, f := range []struct{ name, v string }{
		{"server", e.Server}, {"label", e.Label}, {"tool", e.Tool}, {"stage", e.Stage}, {"code", e.Code},
		{"provider", e.Provider}, {"digest", e.Digest}, {"contract", e.Contract}, {"receipt", e.Receipt},
		{"subject", e.Subject}, {"issuer", e.Issuer}, {"client", e.Client}, {"jti", e.JTI},
	} {
		if f.v != "" {
			b = append(append(append(append(append(b, `,"`...), f.name...), `":"`...), f.v...), '"')
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"count", e.Count}, {"bytes", e.Bytes}, {"ms", e.Millis}} {
		if f.v != 0 {
			b = append(append(append(b, `,"`...), f.name...), `":`...)
			b = strconv.AppendInt(b, f.v, 10)
		}
	}
	b = append(b, `,"prev":"`...)
	b = append(b, e.Prev...)
	return append(b, `"}`...), true
}

// plainFields are the strings appendLine writes.
const plainFields = 16

// plainString reports whether encoding/json writes s as it is, between
// quotes: printable ASCII without '"' and '\'. It reads eight bytes at a
// time (every event's fields pass through it); plainByte is the rule.
func plainString(s string) bool { return everyByte(s, plainWord, plainByte) }

// everyByte reports whether each byte of s passes byteOK, reading eight
// at a time through wordOK, which must be byteOK for each byte of a word.
func everyByte(s string, wordOK func(uint64) bool, byteOK func(byte) bool) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !wordOK(load8(s[i:])) {
			return false
		}
	}
	for ; i < len(s); i++ {
		if !byteOK(s[i]) {
			return false
		}
	}
	return true
}

func plainByte(c byte) bool { return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\' }

// Bytes of a word, for the tests below (Bit Twiddling Hacks, "determine
// if a word has a byte less than n" and "... equal to n"): each is
// nonzero exactly when some byte of the word is as said.
const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
)

// plainWord is plainByte for each of the eight bytes of x.
func plainWord(x uint64) bool {
	return x&high == 0 && // ASCII
		(x-ones*0x20)&^x&high == 0 && // no control character
		hasZeroByte(x^(ones*'"')) == 0 && hasZeroByte(x^(ones*'\\')) == 0 && hasZeroByte(x^(ones*0x7f)) == 0
}

func hasZeroByte(x uint64) uint64 { return (x - ones) &^ x & high }

// load8 is the first eight bytes of s, little-endian.
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// encodeJSON is encode by encoding/json.
func encodeJSON(e *Event) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// parseLine decodes one line and checks that it is exactly what encode
// writes for a valid event.
func parseLine(line []byte) (Event, error) {
	var e Event
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || dec.More() {
		return e, fmt.Errorf("does not parse")
	}
	if e.V != 1 {
		return e, fmt.Errorf("has format version %d", e.V)
	}
	if e.Seq < 1 || !isHex(e.Prev, 64) {
		return e, fmt.Errorf("has an invalid sequence number or prev")
	}
	// A subject or client id is written reduced, and a reduced one that
	// had to change carries "~" and a digest, which reducing again would
	// change once more: they are checked for the written form instead.
	if !writtenSubject(e.Subject) || !writtenSubject(e.Client) {
		return e, fmt.Errorf("holds an invalid field")
	}
	bare := e
	bare.Subject, bare.Client = "", ""
	p, err := prepare(bare, e.Seq, e.Prev)
	if err != nil {
		return e, fmt.Errorf("holds an invalid field")
	}
	p.Subject, p.Client = e.Subject, e.Client
	if enc, err := encode(&p); err != nil || !bytes.Equal(enc, line) {
		return e, fmt.Errorf("is not in canonical form")
	}
	return e, nil
}

func lineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// IsHash reports whether s has the form of a line hash (LineHash): 64
// lowercase hex characters.
func IsHash(s string) bool { return isHex(s, 64) }

func isHex(s string, n int) bool {
	return len(s) == n && everyByte(s, hexWord, hexByte)
}

func hexByte(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// hexWord is hexByte for each of the eight bytes of x: ASCII, and each
// byte either a digit ('0'..'9' is 0x30..0x39) or 'a'..'f' (0x61..0x66).
// Adding 0x80-n to a byte below 0x80 sets its high bit exactly when it is
// at least n, without a carry into the next byte.
func hexWord(x uint64) bool {
	if x&high != 0 {
		return false
	}
	digit := (x + ones*(0x80-0x30)) &^ (x + ones*(0x80-0x3a)) // >= '0' and < ':'
	lower := (x + ones*(0x80-0x61)) &^ (x + ones*(0x80-0x67)) // >= 'a' and < 'g'
	return (digit|lower)&high == high
}
