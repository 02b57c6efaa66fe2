package audit

import (
	"strings"
	"testing"
)

// reduceRune is reduce without its fast path: the reading reduce must
// agree with.
func reduceRune(s string, limit int, extra string) string {
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

func FuzzReduce(f *testing.F) {
	for _, s := range []string{"", "echo", "tools/list", "a b", "é", "\xff", strings.Repeat("x", 70), "get_weather@1", "ké~y"} {
		f.Add(s, 64, "")
		f.Add(s, 8, "@ ")
	}
	f.Fuzz(func(t *testing.T, s string, limit int, extra string) {
		if limit < 0 || limit > 1000 {
			return
		}
		if got, want := reduce(s, limit, extra), reduceRune(s, limit, extra); got != want {
			t.Fatalf("reduce(%q, %d, %q) = %q, want %q", s, limit, extra, got, want)
		}
	})
}
