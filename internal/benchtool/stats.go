package main

import (
	"math"
	"slices"
)

// median is the middle value of v (the mean of the two middle values for
// an even count); NaN for none. v is not changed.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ratio is a/b, NaN when b is not a positive number: a floor that
// measured nothing cannot be divided by.
func ratio(a, b float64) float64 {
	if !(b > 0) || math.IsNaN(a) || math.IsInf(b, 0) {
		return math.NaN()
	}
	return a / b
}

// pairedRatio is the median over alternations of a[i]/b[i]: each
// alternation measured both paths back to back, so the ratio within one is
// the least disturbed by drift in the machine's load. Pairs where either
// is unmeasured are skipped; NaN when none remains.
func pairedRatio(a, b []float64) float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		if q := ratio(a[i], b[i]); !math.IsNaN(q) {
			r = append(r, q)
		}
	}
	return median(r)
}

// maxOf is the largest value of v; NaN for none.
func maxOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return slices.Max(v)
}
