package contract

import (
	"strings"
	"testing"
	"time"
)

// TestRTTrimLinkIsLinear (red team): trimLink counted the brackets of the
// whole link again for every closing bracket it dropped, so a link
// followed by n closing brackets cost O(n²): 1.3 s for 256 KiB, within
// the label budget, inside the pin store's lock.
func TestRTTrimLinkIsLinear(t *testing.T) {
	t.Parallel()
	s := "http://a" + strings.Repeat(")", 256<<10)
	start := time.Now()
	if got := trimLink(s); got != "http://a" {
		t.Fatalf("trimLink left %d bytes", len(got))
	}
	if d := time.Since(start); d > 50*time.Millisecond*raceSlowdown {
		t.Errorf("trimLink of a 256 KiB link took %v: quadratic", d)
	}
}

// FuzzTrimLinkIsTheRecount: trimLink trims what it did when it counted
// the brackets again at every step.
func FuzzTrimLinkIsTheRecount(f *testing.F) {
	for _, s := range []string{"http://a)", "http://a/(b)", "http://a/(b))", "x]].", "{a}}}", "http://a?!", "(()))", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := trimLink(s), trimLinkRecount(s); got != want {
			t.Fatalf("trimLink(%q) = %q, want %q", s, got, want)
		}
	})
}

// trimLinkRecount is trimLink as it was: plain, and quadratic.
func trimLinkRecount(s string) string {
	for s != "" {
		c := s[len(s)-1]
		switch {
		case strings.IndexByte(".,;:!?'\"", c) >= 0:
		case c == ')' && strings.Count(s, "(") < strings.Count(s, ")"):
		case c == ']' && strings.Count(s, "[") < strings.Count(s, "]"):
		case c == '}' && strings.Count(s, "{") < strings.Count(s, "}"):
		default:
			return s
		}
		s = s[:len(s)-1]
	}
	return s
}

// TestPrintableASCIIIsVisible holds visible's fast path: no printable
// ASCII character is one isInvisible escapes.
func TestPrintableASCIIIsVisible(t *testing.T) {
	t.Parallel()
	for r := ' '; r <= '~'; r++ {
		if isInvisible(r) {
			t.Errorf("%q is invisible", r)
		}
	}
}
