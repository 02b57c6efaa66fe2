package canon

import "strconv"

// appendNumber writes the finite double f the way ECMAScript's
// Number.prototype.toString does (ECMA-262, Number::toString, which
// RFC 8785 section 3.2.2.3 adopts):
//
// Let the shortest decimal digits that round-trip to f be s, k of them,
// with f = s × 10^(n−k). Then, for f > 0:
//
//	k ≤ n ≤ 21   s followed by n−k zeros            (1e20 → 100000000000000000000)
//	0 < n ≤ 21   s[:n] "." s[n:]                    (4.5)
//	−6 < n ≤ 0   "0." then −n zeros, then s         (0.000001)
//	otherwise    s[0] ["." s[1:]] "e" sign (n−1)    (1e+21, 1e-7, 1.5e-7)
//
// Go's strconv gives the same shortest digits (and, where two candidates
// are equally short, the one closest to f, as ECMAScript requires); only
// the layout differs from Go's own 'g' format, so it is done here.
func appendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // both zeros
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // "-d.ddde±xx"
	if b[0] == '-' {
		dst = append(dst, '-')
		b = b[1:]
	}
	var dbuf [24]byte
	digits := append(dbuf[:0], b[0])
	i := 1
	if b[1] == '.' {
		for i = 2; b[i] != 'e'; i++ {
			digits = append(digits, b[i])
		}
	}
	// b[i] is 'e', then a sign and at least two digits.
	exp := 0
	for _, c := range b[i+2:] {
		exp = exp*10 + int(c-'0')
	}
	if b[i+1] == '-' {
		exp = -exp
	}
	n, k := exp+1, len(digits)
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		} else {
			dst = append(dst, '-')
		}
		dst = strconv.AppendInt(dst, int64(abs(n-1)), 10)
	}
	return dst
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
