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
	if e.Server != "" && !isHex(e.Server, 16) {
		return e, invalid("server is not a 16-hex id")
	}
	for _, d := range []string{e.Digest, e.Contract, e.Receipt, e.JTI} {
		if d != "" && !isHex(d, 64) {
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
		e.Tool = contract.SafeName(e.Tool)
	}
	e.Label = reduce(e.Label, maxLabelLen, " []")
	e.Stage = reduce(e.Stage, maxCodeLen, "")
	e.Code = reduce(e.Code, maxCodeLen, "")
	e.Provider = reduce(e.Provider, maxCodeLen, "")
	e.Subject = ReduceSubject(e.Subject)
	e.Issuer = reduce(e.Issuer, maxIssuerLen, "")
	e.Client = ReduceSubject(e.Client)
	return e, nil
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
func encode(e *Event) ([]byte, error) { return encodeTo(make([]byte, 0, 320), e) }

// encodeTo is encode appending to dst.
func encodeTo(dst []byte, e *Event) ([]byte, error) {
	if line, ok := appendLine(dst, e); ok {
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
func appendLine(b []byte, e *Event) ([]byte, bool) {
	if e.Anchor != nil || e.Time.Year() < 0 || e.Time.Year() > 9999 {
		return nil, false
	}
	for _, s := range []string{string(e.Op), string(e.Outcome), e.Server, e.Label, e.Tool, e.Stage, e.Code, e.Provider, e.Digest, e.Contract, e.Receipt, e.Subject, e.Issuer, e.Client, e.JTI, e.Prev} {
		if !plainString(s) {
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

// plainString reports whether encoding/json writes s as it is, between
// quotes: printable ASCII without '"' and '\'.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
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
	p, err := prepare(e, e.Seq, e.Prev)
	if err != nil {
		return e, fmt.Errorf("holds an invalid field")
	}
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
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
