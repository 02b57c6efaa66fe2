package jsonrpc

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects in any value this
// package accepts, counting the outermost one.
// why: deep enough for any real schema or result (they nest tens deep), and
// shallow enough that the recursive parsers behind the gate (Python's json
// gives up near 1000, JavaScript engines overflow their stack somewhere
// above that) never see a frame the gate passed but they cannot read.
const maxDepth = 512

// The scanner works on positions in a byte slice. Every scan function takes
// the position of the first byte of a token and returns the position just
// after it, or an error that names the offset but never the bytes there.

// isSpace reports whether c is JSON whitespace (RFC 8259 section 2).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func skipSpace(d []byte, i int) int {
	for i < len(d) {
		if c := d[i]; c > ' ' || !isSpace(c) {
			break
		}
		i++
	}
	return i
}

// Constants for examining eight string bytes at once.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plain marks the string bytes that need no attention: printable ASCII other
// than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// hexVal maps an ASCII hex digit to its value and every other byte to -1.
var hexVal = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = int8(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = int8(c - 'a' + 10)
		t[c-'a'+'A'] = int8(c - 'a' + 10)
	}
	return t
}()

// scanString scans the string whose opening quote is at d[i]. It reports
// whether the string contains escapes. It rejects control characters,
// malformed escapes, escaped lone surrogates and invalid UTF-8: each is read
// differently by different parsers.
func scanString(d []byte, i int) (end int, escaped bool, err error) {
	start := i
	i++
	for {
		// Eight bytes at a time while none is special. The lowest flagged
		// byte of the mask is always a true hit, so the switch below starts
		// right at it; only the last few bytes go one at a time.
		if i+8 <= len(d) {
			v := binary.LittleEndian.Uint64(d[i:])
			q := v ^ (lsb * '"')
			b := v ^ (lsb * '\\')
			m := ((v-lsb*0x20)&^v | (q-lsb)&^q | (b-lsb)&^b | v) & msb
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else {
			for i < len(d) && plain[d[i]] {
				i++
			}
			if i >= len(d) {
				return 0, false, syntaxErr("unterminated string", start)
			}
		}
		switch c := d[i]; {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 < len(d) && shortEscape[d[i+1]] {
				i += 2
			} else if i, err = scanEscape(d, i); err != nil {
				return 0, false, err
			}
		case c < 0x20:
			return 0, false, syntaxErr("control character in string", i)
		case c < utf8.RuneSelf:
			i++ // not reached: both paths above stop only at special bytes
		default:
			var ok bool
			if i, ok = scanUTF8(d, i); !ok {
				return 0, false, syntaxErr("invalid UTF-8 in string", i)
			}
		}
	}
}

// shortEscape marks the bytes that form a two-byte escape after '\\'.
var shortEscape = func() (t [256]bool) {
	for _, c := range `"\/bfnrt` {
		t[c] = true
	}
	return t
}()

// scanUTF8 scans the run of multi-byte UTF-8 sequences starting at d[i]. It
// returns the position after the run, or the position of the first invalid
// sequence and false. The ranges are those of RFC 3629 (and of
// unicode/utf8): no overlong forms, no surrogates, nothing above U+10FFFF.
func scanUTF8(d []byte, i int) (int, bool) {
	for i < len(d) {
		c := d[i]
		switch {
		case c < 0x80:
			return i, true
		case c < 0xc2:
			return i, false
		case c < 0xe0:
			if i+1 >= len(d) || d[i+1]&0xc0 != 0x80 {
				return i, false
			}
			i += 2
		case c < 0xf0:
			if i+2 >= len(d) || d[i+2]&0xc0 != 0x80 {
				return i, false
			}
			lo, hi := byte(0x80), byte(0xbf)
			switch c {
			case 0xe0:
				lo = 0xa0
			case 0xed:
				hi = 0x9f
			}
			if b := d[i+1]; b < lo || b > hi {
				return i, false
			}
			i += 3
		case c < 0xf5:
			if i+3 >= len(d) || d[i+2]&0xc0 != 0x80 || d[i+3]&0xc0 != 0x80 {
				return i, false
			}
			lo, hi := byte(0x80), byte(0xbf)
			switch c {
			case 0xf0:
				lo = 0x90
			case 0xf4:
				hi = 0x8f
			}
			if b := d[i+1]; b < lo || b > hi {
				return i, false
			}
			i += 4
		default:
			return i, false
		}
	}
	return i, true
}

// scanEscape scans the escape sequence whose backslash is at d[i].
func scanEscape(d []byte, i int) (int, error) {
	if i+1 >= len(d) {
		return 0, syntaxErr("unterminated string", i)
	}
	switch d[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2, nil
	case 'u':
		r, ok := hex4(d, i+2)
		if !ok {
			return 0, syntaxErr("invalid \\u escape", i)
		}
		if !utf16.IsSurrogate(r) {
			return i + 6, nil
		}
		if r < 0xdc00 && i+12 <= len(d) && d[i+6] == '\\' && d[i+7] == 'u' {
			if r2, ok := hex4(d, i+8); ok && 0xdc00 <= r2 && r2 <= 0xdfff {
				return i + 12, nil
			}
		}
		return 0, syntaxErr("unpaired surrogate escape", i)
	}
	return 0, syntaxErr("invalid escape", i)
}

// hex4 decodes the four hex digits at d[i:i+4].
func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	a, b, c, e := hexVal[d[i]], hexVal[d[i+1]], hexVal[d[i+2]], hexVal[d[i+3]]
	if a|b|c|e < 0 {
		return 0, false
	}
	return rune(a)<<12 | rune(b)<<8 | rune(c)<<4 | rune(e), true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func skipDigits(d []byte, i int) int {
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	return i
}

// scanNumber scans a number per the RFC 8259 grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(d []byte, i int) (int, error) {
	start := i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && isDigit(d[i]):
		i = skipDigits(d, i+1)
	default:
		return 0, syntaxErr("invalid value", start)
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return 0, syntaxErr("invalid number", start)
		}
		i = skipDigits(d, i+1)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return 0, syntaxErr("invalid number", start)
		}
		i = skipDigits(d, i+1)
	}
	return i, nil
}

// scanLiteral scans the literal lit at d[i].
func scanLiteral(d []byte, i int, lit string) (int, error) {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return 0, syntaxErr("invalid value", i)
	}
	return i + len(lit), nil
}

// scanColon scans the whitespace, colon and whitespace after a member name
// and returns the position of the member's value.
func scanColon(d []byte, i int) (int, error) {
	i = skipSpace(d, i)
	if i >= len(d) || d[i] != ':' {
		return 0, syntaxErr("expected colon", i)
	}
	return skipSpace(d, i+1), nil
}

// skipValue validates the value at d[i] (after optional whitespace) and
// returns the position just after it. Nested values are validated, not
// decoded, without recursion; depth is how many containers the value may
// open.
func skipValue(d []byte, i int, depth int) (int, error) {
	// open is a stack of the containers entered, one bit each: 1 for an
	// object, 0 for an array.
	var open [(maxDepth + 63) / 64]uint64
	n := 0
	var err error
	for {
		i = skipSpace(d, i)
		if i >= len(d) {
			return 0, syntaxErr("unexpected end", i)
		}
		switch d[i] {
		case '{':
			if n >= depth {
				return 0, syntaxErr("nesting too deep", i)
			}
			open[n>>6] |= 1 << (n & 63)
			n++
			if i = skipSpace(d, i+1); i < len(d) && d[i] == '}' {
				i++
				n--
				break
			}
			if i >= len(d) || d[i] != '"' {
				return 0, syntaxErr("expected member name", i)
			}
			if i, _, err = scanString(d, i); err != nil {
				return 0, err
			}
			if i, err = scanColon(d, i); err != nil {
				return 0, err
			}
			continue
		case '[':
			if n >= depth {
				return 0, syntaxErr("nesting too deep", i)
			}
			open[n>>6] &^= 1 << (n & 63)
			n++
			if i = skipSpace(d, i+1); i < len(d) && d[i] == ']' {
				i++
				n--
				break
			}
			continue
		case '"':
			i, _, err = scanString(d, i)
		case 't':
			i, err = scanLiteral(d, i, "true")
		case 'f':
			i, err = scanLiteral(d, i, "false")
		case 'n':
			i, err = scanLiteral(d, i, "null")
		default:
			i, err = scanNumber(d, i)
		}
		if err != nil {
			return 0, err
		}
		// A value ended: close containers until one continues.
		for {
			if n == 0 {
				return i, nil
			}
			i = skipSpace(d, i)
			if i >= len(d) {
				return 0, syntaxErr("unexpected end", i)
			}
			inObject := open[(n-1)>>6]&(1<<((n-1)&63)) != 0
			c := d[i]
			if c == ',' {
				i = skipSpace(d, i+1)
				if inObject {
					if i >= len(d) || d[i] != '"' {
						return 0, syntaxErr("expected member name", i)
					}
					if i, _, err = scanString(d, i); err != nil {
						return 0, err
					}
					if i, err = scanColon(d, i); err != nil {
						return 0, err
					}
				}
				break
			}
			if inObject && c == '}' || !inObject && c == ']' {
				i++
				n--
				continue
			}
			return 0, syntaxErr("unexpected byte", i)
		}
	}
}

// endOfInput checks that only whitespace follows position i.
func endOfInput(d []byte, i int) error {
	if i = skipSpace(d, i); i != len(d) {
		return syntaxErr("data after value", i)
	}
	return nil
}

// unescape decodes the body of a string that scanString accepted (without
// its quotes) and appends it to b.
func unescape(b, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := i + 1
			for j < len(s) && s[j] != '\\' {
				j++
			}
			b = append(b, s[i:j]...)
			i = j
			continue
		}
		switch s[i+1] {
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
			r, _ := hex4(s, i+2)
			if utf16.IsSurrogate(r) {
				r2, _ := hex4(s, i+8)
				r = utf16.DecodeRune(r, r2)
				i += 6
			}
			b = utf8.AppendRune(b, r)
			i += 6
			continue
		default: // '"', '\\', '/'
			b = append(b, s[i+1])
		}
		i += 2
	}
	return b
}
