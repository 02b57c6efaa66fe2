package policy

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/canon"
)

// decodeStrict is checkIJSON and decodeValue in one pass over raw, for the
// per-call path: it decodes one JSON value into the Go values a JSON
// Schema validator reads (map[string]any, []any, string, bool, nil and
// json.Number holding the number as sent), and refuses it exactly as the
// two would:
//
//   - errNotIJSON for anything that is not one I-JSON value: invalid JSON,
//     invalid UTF-8, an escaped lone surrogate, a member name repeated in
//     one object (after decoding escapes), a number outside a double's
//     range, nesting deeper than canon.MaxDepth;
//   - errAmbiguous for an I-JSON value in which an object has two member
//     names equal up to case folding.
//
// FuzzDecodeStrict holds it to the two-pass reading.
func decodeStrict(raw []byte) (any, error) {
	d := strictDecoder{d: raw}
	v, err := d.value(0)
	if err != nil {
		return nil, errNotIJSON
	}
	d.space()
	if d.i != len(d.d) {
		return nil, errNotIJSON
	}
	if d.folded {
		return nil, errAmbiguous
	}
	return v, nil
}

type strictDecoder struct {
	d      []byte
	i      int
	folded bool // an object had two names equal up to case
	buf    []byte
}

func (d *strictDecoder) space() {
	for d.i < len(d.d) {
		switch d.d[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *strictDecoder) value(depth int) (any, error) {
	d.space()
	if d.i >= len(d.d) {
		return nil, errNotIJSON
	}
	switch c := d.d[d.i]; {
	case c == '{':
		if depth >= canon.MaxDepth {
			return nil, errNotIJSON
		}
		return d.object(depth)
	case c == '[':
		if depth >= canon.MaxDepth {
			return nil, errNotIJSON
		}
		return d.array(depth)
	case c == '"':
		return d.str()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return nil, errNotIJSON
}

func (d *strictDecoder) literal(lit string) error {
	if len(d.d)-d.i < len(lit) || string(d.d[d.i:d.i+len(lit)]) != lit {
		return errNotIJSON
	}
	d.i += len(lit)
	return nil
}

func (d *strictDecoder) object(depth int) (any, error) {
	d.i++ // '{'
	m := map[string]any{}
	d.space()
	if d.i < len(d.d) && d.d[d.i] == '}' {
		d.i++
		return m, nil
	}
	// Names equal up to case: compared pairwise while the object is
	// small (no allocation), by FoldKey in a set past that.
	var (
		small [8]string
		n     int
		folds map[string]struct{}
	)
	for {
		d.space()
		if d.i >= len(d.d) || d.d[d.i] != '"' {
			return nil, errNotIJSON
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, errNotIJSON
		}
		d.space()
		if d.i >= len(d.d) || d.d[d.i] != ':' {
			return nil, errNotIJSON
		}
		d.i++
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		switch {
		case d.folded:
		case n < len(small):
			for _, k0 := range small[:n] {
				if strings.EqualFold(k0, k) {
					d.folded = true
				}
			}
			small[n] = k
			n++
		default:
			if folds == nil {
				folds = make(map[string]struct{}, 2*len(small))
				for _, k0 := range small {
					folds[FoldKey(k0)] = struct{}{}
				}
			}
			f := FoldKey(k)
			if _, ok := folds[f]; ok {
				d.folded = true
			}
			folds[f] = struct{}{}
		}
		d.space()
		if d.i >= len(d.d) {
			return nil, errNotIJSON
		}
		switch d.d[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return m, nil
		default:
			return nil, errNotIJSON
		}
	}
}

func (d *strictDecoder) array(depth int) (any, error) {
	d.i++ // '['
	a := []any{}
	d.space()
	if d.i < len(d.d) && d.d[d.i] == ']' {
		d.i++
		return a, nil
	}
	for {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.space()
		if d.i >= len(d.d) {
			return nil, errNotIJSON
		}
		switch d.d[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return a, nil
		default:
			return nil, errNotIJSON
		}
	}
}

// str decodes a string at d.i: valid UTF-8, no raw control characters,
// escaped surrogates only in pairs.
func (d *strictDecoder) str() (string, error) {
	d.i++ // '"'
	start := d.i
	// Fast path: no escapes.
	for d.i < len(d.d) {
		c := d.d[d.i]
		if c == '"' {
			s := d.d[start:d.i]
			d.i++
			if !utf8.Valid(s) {
				return "", errNotIJSON
			}
			return string(s), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		d.i++
	}
	b := append(d.buf[:0], d.d[start:d.i]...)
	for d.i < len(d.d) {
		c := d.d[d.i]
		switch {
		case c == '"':
			d.i++
			d.buf = b
			if !utf8.Valid(b) {
				return "", errNotIJSON
			}
			return string(b), nil
		case c < 0x20:
			return "", errNotIJSON
		case c != '\\':
			b = append(b, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.d) {
			return "", errNotIJSON
		}
		e := d.d[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", errNotIJSON
			}
			if utf16.IsSurrogate(r) {
				// Only a high surrogate followed by an escaped low one.
				if r >= 0xDC00 || d.i+1 >= len(d.d) || d.d[d.i] != '\\' || d.d[d.i+1] != 'u' {
					return "", errNotIJSON
				}
				d.i += 2
				lo, ok := d.hex4()
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return "", errNotIJSON
				}
				r = utf16.DecodeRune(r, lo)
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", errNotIJSON
		}
	}
	return "", errNotIJSON
}

func (d *strictDecoder) hex4() (rune, bool) {
	if d.i+4 > len(d.d) {
		return 0, false
	}
	var r rune
	for _, c := range d.d[d.i : d.i+4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	d.i += 4
	return r, true
}

// number scans a JSON number and keeps it as sent; one outside a
// double's range is not I-JSON.
func (d *strictDecoder) number() (any, error) {
	start := d.i
	if d.d[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.d) && d.d[d.i] == '0':
		d.i++
	case d.i < len(d.d) && '1' <= d.d[d.i] && d.d[d.i] <= '9':
		d.digits()
	default:
		return nil, errNotIJSON
	}
	if d.i < len(d.d) && d.d[d.i] == '.' {
		d.i++
		if !d.digits() {
			return nil, errNotIJSON
		}
	}
	if d.i < len(d.d) && (d.d[d.i] == 'e' || d.d[d.i] == 'E') {
		d.i++
		if d.i < len(d.d) && (d.d[d.i] == '+' || d.d[d.i] == '-') {
			d.i++
		}
		if !d.digits() {
			return nil, errNotIJSON
		}
	}
	s := string(d.d[start:d.i])
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return nil, errNotIJSON
	}
	return json.Number(s), nil
}

func (d *strictDecoder) digits() bool {
	start := d.i
	for d.i < len(d.d) && '0' <= d.d[d.i] && d.d[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// decodeArguments is decodeStrict(params) followed by taking its
// "arguments" member (an empty object when there is none), but it builds
// Go values for that member alone: every other member (a 2026-07-28
// request's _meta is most of its params) is checked by the same rules
// and left as bytes. Errors are decodeStrict's, and errNotObject when
// params is not an object. FuzzDecodeArguments holds it to that
// composition.
func decodeArguments(params []byte) (any, error) {
	d := strictDecoder{d: params}
	d.space()
	if d.i >= len(d.d) || d.d[d.i] != '{' {
		if _, err := decodeStrict(params); err != nil {
			return nil, err
		}
		return nil, errNotObject
	}
	var args any
	found := false
	err := d.members(0, func(k []byte) error {
		if string(k) != "arguments" {
			return d.skip(1)
		}
		v, err := d.value(1)
		args, found = v, true
		return err
	})
	if err != nil {
		return nil, errNotIJSON
	}
	d.space()
	if d.i != len(d.d) {
		return nil, errNotIJSON
	}
	if d.folded {
		return nil, errAmbiguous
	}
	if !found {
		args = map[string]any{}
	}
	return args, nil
}

// skip checks the value at d.i as value does, building nothing.
func (d *strictDecoder) skip(depth int) error {
	d.space()
	if d.i >= len(d.d) {
		return errNotIJSON
	}
	switch c := d.d[d.i]; {
	case c == '{':
		if depth >= canon.MaxDepth {
			return errNotIJSON
		}
		return d.members(depth, func([]byte) error { return d.skip(depth + 1) })
	case c == '[':
		if depth >= canon.MaxDepth {
			return errNotIJSON
		}
		d.i++
		d.space()
		if d.i < len(d.d) && d.d[d.i] == ']' {
			d.i++
			return nil
		}
		for {
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			d.space()
			if d.i >= len(d.d) {
				return errNotIJSON
			}
			switch d.d[d.i] {
			case ',':
				d.i++
			case ']':
				d.i++
				return nil
			default:
				return errNotIJSON
			}
		}
	case c == '"':
		_, err := d.rawStr()
		return err
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		_, err := d.number()
		return err
	}
	return errNotIJSON
}

// members walks the object at d.i, calling member for each name (decoded,
// valid only during the call's lifetime unless escaped) with d.i at its
// value, which member must consume. It refuses what object refuses and
// sets d.folded as object does.
func (d *strictDecoder) members(depth int, member func(name []byte) error) error {
	d.i++ // '{'
	d.space()
	if d.i < len(d.d) && d.d[d.i] == '}' {
		d.i++
		return nil
	}
	var (
		small [8][]byte
		n     int
		names map[string]struct{} // past len(small): exact names
		folds map[string]struct{} // and their case folds
	)
	for {
		d.space()
		if d.i >= len(d.d) || d.d[d.i] != '"' {
			return errNotIJSON
		}
		k, err := d.rawStr()
		if err != nil {
			return err
		}
		if n < len(small) {
			for _, k0 := range small[:n] {
				if bytes.Equal(k0, k) {
					return errNotIJSON
				}
				if bytes.EqualFold(k0, k) {
					d.folded = true
				}
			}
			small[n] = k
			n++
		} else {
			if names == nil {
				names = make(map[string]struct{}, 2*len(small))
				folds = make(map[string]struct{}, 2*len(small))
				for _, k0 := range small {
					names[string(k0)] = struct{}{}
					folds[FoldKey(string(k0))] = struct{}{}
				}
			}
			if _, dup := names[string(k)]; dup {
				return errNotIJSON
			}
			names[string(k)] = struct{}{}
			f := FoldKey(string(k))
			if _, ok := folds[f]; ok {
				d.folded = true
			}
			folds[f] = struct{}{}
		}
		d.space()
		if d.i >= len(d.d) || d.d[d.i] != ':' {
			return errNotIJSON
		}
		d.i++
		if err := member(k); err != nil {
			return err
		}
		d.space()
		if d.i >= len(d.d) {
			return errNotIJSON
		}
		switch d.d[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return errNotIJSON
		}
	}
}

// rawStr checks the string at d.i as str does and returns its decoded
// bytes: a slice of the input when it has no escapes, a new slice when it
// has (never d.buf, which the next string reuses).
func (d *strictDecoder) rawStr() ([]byte, error) {
	start := d.i + 1
	for j := start; j < len(d.d); j++ {
		c := d.d[j]
		if c == '"' {
			s := d.d[start:j]
			if !utf8.Valid(s) {
				return nil, errNotIJSON
			}
			d.i = j + 1
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	saved := d.buf
	d.buf = nil
	s, err := d.str()
	d.buf = saved
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}
