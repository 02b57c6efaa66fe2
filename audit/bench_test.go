package audit

import "testing"

// BenchmarkAppend is the cost of recording one call event: lock, find the
// tip, append one line, rewrite the head.
func BenchmarkAppend(b *testing.B) {
	home := b.TempDir()
	l, err := Open(home, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	e := callEvent(1)
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Append(e); err != nil {
			b.Fatal(err)
		}
	}
}
