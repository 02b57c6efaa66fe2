package canon

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A parser reads one JSON value by recursive descent and writes its
// canonical form as it goes. Strings and numbers are written in canonical
// form as they are read. An object's members are written in the order
// received; when the object closes, the members are sorted and, if the
// order changed, the object's body is rewritten from a scratch copy. Every
// buffer is reused across calls (see the pool in canon.go), so a call
// allocates little beyond its output.
type parser struct {
	in    []byte
	pos   int
	out   []byte
	depth int

	// members holds the members of every open object, innermost last.
	members []member
	// keys holds the unescaped names of members whose canonical name
	// contains an escape; other names are read straight from out.
	keys []byte
	// order and tmp are scratch space for sorting an object's members
	// and rewriting its body.
	order []int32
	tmp   []byte
	// digestBuf is Digest's reusable output buffer.
	digestBuf []byte
}

// A member is one `"name":value` pair of the object being parsed.
type member struct {
	start, end int // the canonical member in out
	nameOff    int // offset of the name in the input, for errors
	// The unescaped name is keys[a:b] when inKeys, else out[a:b].
	a, b   int
	inKeys bool
	// prefix holds the name's first 8 bytes, big-endian and zero-padded;
	// fast reports that none of them is 0xEE or above, so that where two
	// fast prefixes differ, comparing them as integers gives the UTF-16
	// order (the characters involved are all below U+E000, where UTF-8,
	// code point and UTF-16 order agree).
	prefix uint64
	fast   bool
}

func (m *member) setPrefix(name []byte) {
	m.prefix, m.fast = 0, true
	for i, c := range name[:min(len(name), 8)] {
		if c >= 0xee {
			m.prefix, m.fast = 0, false
			return
		}
		m.prefix |= uint64(c) << (56 - 8*i)
	}
}

func (p *parser) compare(x, y *member) int {
	if x.fast && y.fast && x.prefix != y.prefix {
		return cmp.Compare(x.prefix, y.prefix)
	}
	return compareUTF16(p.name(x), p.name(y))
}

func (p *parser) name(m *member) []byte {
	if m.inKeys {
		return p.keys[m.a:m.b]
	}
	return p.out[m.a:m.b]
}

func (p *parser) fail(off int, err error, detail string) error {
	return &Error{Offset: off, Err: err, Detail: detail}
}

// run canonicalizes in, appending to out. It keeps no reference to either.
func (p *parser) run(out, in []byte) ([]byte, error) {
	p.in, p.pos, p.out, p.depth = in, 0, out, 0
	p.members, p.keys = p.members[:0], p.keys[:0]
	defer func() { p.in, p.out = nil, nil }()

	p.skipSpace()
	if err := p.value(); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.in) {
		return nil, p.fail(p.pos, ErrInvalid, "data after the value")
	}
	return p.out, nil
}

func (p *parser) skipSpace() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() error {
	if p.pos >= len(p.in) {
		return p.fail(p.pos, ErrInvalid, "unexpected end of input")
	}
	switch c := p.in[p.pos]; c {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		_, err := p.str()
		return err
	case 't':
		return p.literal("true")
	case 'f':
		return p.literal("false")
	case 'n':
		return p.literal("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return p.number()
		}
		return p.fail(p.pos, ErrInvalid, "unexpected character")
	}
}

func (p *parser) literal(lit string) error {
	if len(p.in)-p.pos < len(lit) || string(p.in[p.pos:p.pos+len(lit)]) != lit {
		return p.fail(p.pos, ErrInvalid, "invalid literal")
	}
	p.out = append(p.out, lit...)
	p.pos += len(lit)
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return p.fail(p.pos, ErrDepth, "")
	}
	return nil
}

func (p *parser) array() error {
	if err := p.enter(); err != nil {
		return err
	}
	p.pos++
	p.out = append(p.out, '[')
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
		p.out = append(p.out, ']')
		p.depth--
		return nil
	}
	for {
		if err := p.value(); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.in) {
			return p.fail(p.pos, ErrInvalid, "unexpected end of input")
		}
		switch p.in[p.pos] {
		case ',':
			p.pos++
			p.out = append(p.out, ',')
			p.skipSpace()
		case ']':
			p.pos++
			p.out = append(p.out, ']')
			p.depth--
			return nil
		default:
			return p.fail(p.pos, ErrInvalid, "expected ',' or ']'")
		}
	}
}

func (p *parser) object() error {
	if err := p.enter(); err != nil {
		return err
	}
	p.pos++
	p.out = append(p.out, '{')
	body := len(p.out)
	base, keysMark := len(p.members), len(p.keys)
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		p.out = append(p.out, '}')
		p.depth--
		return nil
	}
	for {
		if p.pos >= len(p.in) {
			return p.fail(p.pos, ErrInvalid, "unexpected end of input")
		}
		if p.in[p.pos] != '"' {
			return p.fail(p.pos, ErrInvalid, "expected member name")
		}
		m := member{start: len(p.out), nameOff: p.pos}
		escaped, err := p.str()
		if err != nil {
			return err
		}
		m.a, m.b = m.start+1, len(p.out)-1
		if escaped {
			m.inKeys, m.a = true, len(p.keys)
			p.keys = unescapeCanonical(p.keys, p.out[m.start+1:len(p.out)-1])
			m.b = len(p.keys)
		}
		m.setPrefix(p.name(&m))
		p.skipSpace()
		if p.pos >= len(p.in) || p.in[p.pos] != ':' {
			return p.fail(p.pos, ErrInvalid, "expected ':'")
		}
		p.pos++
		p.out = append(p.out, ':')
		p.skipSpace()
		if err := p.value(); err != nil {
			return err
		}
		m.end = len(p.out)
		p.members = append(p.members, m)

		p.skipSpace()
		if p.pos >= len(p.in) {
			return p.fail(p.pos, ErrInvalid, "unexpected end of input")
		}
		if c := p.in[p.pos]; c == ',' {
			p.pos++
			p.out = append(p.out, ',')
			p.skipSpace()
			continue
		} else if c != '}' {
			return p.fail(p.pos, ErrInvalid, "expected ',' or '}'")
		}
		p.pos++
		break
	}
	if err := p.sortMembers(body, p.members[base:]); err != nil {
		return err
	}
	p.out = append(p.out, '}')
	p.members, p.keys = p.members[:base], p.keys[:keysMark]
	p.depth--
	return nil
}

// sortMembers puts the members of the object whose body starts at
// out[body] in canonical order, and rejects a repeated name.
func (p *parser) sortMembers(body int, ms []member) error {
	sorted := true
	for i := 1; i < len(ms); i++ {
		c := p.compare(&ms[i-1], &ms[i])
		if c == 0 {
			return p.duplicate(&ms[i-1], &ms[i])
		}
		if c > 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return nil
	}
	// Sort indices, not the members themselves: far less copying.
	ord := p.order[:0]
	for i := range ms {
		ord = append(ord, int32(i))
	}
	p.order = ord
	slices.SortFunc(ord, func(i, j int32) int { return p.compare(&ms[i], &ms[j]) })
	for i := 1; i < len(ord); i++ {
		if bytes.Equal(p.name(&ms[ord[i-1]]), p.name(&ms[ord[i]])) {
			return p.duplicate(&ms[ord[i-1]], &ms[ord[i]])
		}
	}
	p.tmp = append(p.tmp[:0], p.out[body:]...)
	p.out = p.out[:body]
	for i, o := range ord {
		if i > 0 {
			p.out = append(p.out, ',')
		}
		p.out = append(p.out, p.tmp[ms[o].start-body:ms[o].end-body]...)
	}
	return nil
}

// duplicate reports the later of two members that share a name.
func (p *parser) duplicate(x, y *member) error {
	return p.fail(max(x.nameOff, y.nameOff), ErrDuplicateKey, "")
}

// plain[c] reports whether byte c is copied into a canonical string as it
// is without further checks: printable ASCII other than '"' and '\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string at p.pos and writes it in canonical form. It
// reports whether the canonical form contains an escape.
func (p *parser) str() (escaped bool, err error) {
	in := p.in
	start := p.pos
	i := start + 1
	p.out = append(p.out, '"')
	for {
		// Find the end of the run that is copied as it is: plain ASCII
		// and valid UTF-8.
		j := i
		for j < len(in) {
			// Eight plain bytes at a time: stop at a word holding a byte
			// below 0x20, a '"', a '\\' or a byte of 0x80 or above. (The
			// has-zero-byte test (v-0x01…)&^v&0x80… is nonzero exactly
			// when some byte of v is zero.)
			const ones, highs = 0x0101010101010101, 0x8080808080808080
			for j+8 <= len(in) {
				x := binary.LittleEndian.Uint64(in[j:])
				q, bs := x^(ones*'"'), x^(ones*'\\')
				if ((x-ones*0x20)&^x|(q-ones)&^q|(bs-ones)&^bs|x)&highs != 0 {
					break
				}
				j += 8
			}
			for j < len(in) && plain[in[j]] {
				j++
			}
			if j >= len(in) || in[j] < utf8.RuneSelf {
				break // end of input, '"', '\\' or a control character
			}
			r, size := utf8.DecodeRune(in[j:])
			if r == utf8.RuneError && size == 1 {
				return false, p.fail(j, ErrInvalid, "invalid UTF-8")
			}
			j += size
		}
		p.out = append(p.out, in[i:j]...)
		i = j
		if i >= len(in) {
			return false, p.fail(start, ErrInvalid, "unterminated string")
		}
		switch in[i] {
		case '"':
			p.pos = i + 1
			p.out = append(p.out, '"')
			return escaped, nil
		case '\\':
			n, esc, err := p.escape(i)
			if err != nil {
				return false, err
			}
			escaped = escaped || esc
			i += n
		default:
			return false, p.fail(i, ErrInvalid, "control character in string")
		}
	}
}

// escape reads the escape sequence at in[i] (a backslash), writes the
// character in canonical form, and returns the input length it took and
// whether the canonical form is an escape.
func (p *parser) escape(i int) (n int, escaped bool, err error) {
	in := p.in
	if i+1 >= len(in) {
		return 0, false, p.fail(i, ErrInvalid, "unterminated string")
	}
	switch in[i+1] {
	case '"', '\\':
		p.out = append(p.out, '\\', in[i+1])
		return 2, true, nil
	case '/':
		p.out = append(p.out, '/')
		return 2, false, nil
	case 'b', 'f', 'n', 'r', 't':
		p.out = append(p.out, '\\', in[i+1])
		return 2, true, nil
	case 'u':
		r, ok := hex4(in, i+2)
		if !ok {
			return 0, false, p.fail(i, ErrInvalid, "invalid \\u escape")
		}
		n = 6
		if utf16.IsSurrogate(r) {
			// I-JSON: only a high surrogate followed by a low one.
			if r >= 0xDC00 || i+12 > len(in) || in[i+6] != '\\' || in[i+7] != 'u' {
				return 0, false, p.fail(i, ErrInvalid, "unpaired surrogate escape")
			}
			lo, ok := hex4(in, i+8)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return 0, false, p.fail(i, ErrInvalid, "unpaired surrogate escape")
			}
			r, n = utf16.DecodeRune(r, lo), 12
		}
		switch {
		case r == '"' || r == '\\':
			p.out = append(p.out, '\\', byte(r))
		case r < 0x20:
			p.out = appendControl(p.out, byte(r))
		default:
			p.out = utf8.AppendRune(p.out, r)
			return n, false, nil
		}
		return n, true, nil
	}
	return 0, false, p.fail(i, ErrInvalid, "invalid escape")
}

const hexDigits = "0123456789abcdef"

// appendControl writes a character below U+0020 as RFC 8785 requires.
func appendControl(dst []byte, c byte) []byte {
	switch c {
	case '\b':
		return append(dst, '\\', 'b')
	case '\t':
		return append(dst, '\\', 't')
	case '\n':
		return append(dst, '\\', 'n')
	case '\f':
		return append(dst, '\\', 'f')
	case '\r':
		return append(dst, '\\', 'r')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// hex4 reads four hex digits at in[at].
func hex4(in []byte, at int) (rune, bool) {
	if at+4 > len(in) {
		return 0, false
	}
	var r rune
	for _, c := range in[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// unescapeCanonical appends the characters of the canonical string body s
// (no quotes) to dst. Canonical strings use only the escapes \" \\ \b \f
// \n \r \t and \u00xx.
func unescapeCanonical(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(s, i+1)
			dst = append(dst, byte(r))
			i += 4
		default: // '"' or '\\'
			dst = append(dst, s[i])
		}
	}
	return dst
}

// number reads the number at p.pos and writes it in canonical form.
func (p *parser) number() error {
	in := p.in
	start := p.pos
	i := start
	if in[i] == '-' {
		i++
	}
	intStart := i
	switch {
	case i < len(in) && in[i] == '0':
		i++
	case i < len(in) && '1' <= in[i] && in[i] <= '9':
		for i < len(in) && '0' <= in[i] && in[i] <= '9' {
			i++
		}
	default:
		return p.fail(start, ErrInvalid, "invalid number")
	}
	intDigits := i - intStart
	integer := true
	if i < len(in) && in[i] == '.' {
		i++
		j := i
		for i < len(in) && '0' <= in[i] && in[i] <= '9' {
			i++
		}
		if i == j {
			return p.fail(start, ErrInvalid, "invalid number")
		}
		integer = false
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		j := i
		for i < len(in) && '0' <= in[i] && in[i] <= '9' {
			i++
		}
		if i == j {
			return p.fail(start, ErrInvalid, "invalid number")
		}
		integer = false
	}
	p.pos = i
	tok := in[start:i]
	// An integer of at most 15 digits is an exact double, and JSON's
	// grammar already gives it the form ECMAScript would write (no leading
	// zeros, no exponent) except for -0.
	if integer && intDigits <= 15 {
		if intDigits == 1 && in[intStart] == '0' {
			p.out = append(p.out, '0')
		} else {
			p.out = append(p.out, tok...)
		}
		return nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		// The grammar was checked above, so this is a number whose
		// magnitude no double can hold (1e400).
		return p.fail(start, ErrInvalid, "number out of range")
	}
	p.out = appendNumber(p.out, f)
	return nil
}
