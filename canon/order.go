package canon

import "cmp"

// compareUTF16 orders two names as sequences of UTF-16 code units, as
// RFC 8785 section 3.2.3 sorts member names. UTF-8 byte order is code
// point order, and UTF-16 order agrees with it except that a character
// above U+FFFF (encoded as a surrogate pair, D800–DBFF first) sorts before
// the characters U+E000–U+FFFF. So: find the first character that differs
// and compare those two characters, putting a supplementary character at
// its high surrogate.
func compareUTF16[T ~string | ~[]byte](a, b T) int {
	n := min(len(a), len(b))
	d := 0
	for d < n && a[d] == b[d] {
		d++
	}
	if d == n {
		return cmp.Compare(len(a), len(b))
	}
	// a[:d] == b[:d], so both differing characters start at the same
	// offset: the last character boundary at or before d.
	s := d
	for s > 0 && a[s]&0xc0 == 0x80 {
		s--
	}
	ra, rb := decodeRune(a[s:]), decodeRune(b[s:])
	if ra == rb {
		// Only for invalid UTF-8; fall back to the bytes.
		return cmp.Compare(a[d], b[d])
	}
	const supplementary = 0x10000
	switch {
	case ra >= supplementary && rb < supplementary:
		// ra starts with a high surrogate: it sorts before rb only if rb
		// is at or above the surrogates.
		if rb >= 0xd800 {
			return -1
		}
		return 1
	case rb >= supplementary && ra < supplementary:
		if ra >= 0xd800 {
			return 1
		}
		return -1
	}
	return cmp.Compare(ra, rb)
}

// decodeRune decodes the UTF-8 character at the start of s, which must be
// non-empty. It does not validate: callers pass validated text, and for
// anything else any deterministic answer will do.
func decodeRune[T ~string | ~[]byte](s T) rune {
	c := s[0]
	switch {
	case c < 0x80:
		return rune(c)
	case c >= 0xf0 && len(s) >= 4:
		return rune(c&0x07)<<18 | rune(s[1]&0x3f)<<12 | rune(s[2]&0x3f)<<6 | rune(s[3]&0x3f)
	case c >= 0xe0 && len(s) >= 3:
		return rune(c&0x0f)<<12 | rune(s[1]&0x3f)<<6 | rune(s[2]&0x3f)
	case c >= 0xc0 && len(s) >= 2:
		return rune(c&0x1f)<<6 | rune(s[1]&0x3f)
	}
	return 0xfffd
}
