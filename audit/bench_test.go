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

// BenchmarkAppendBatch is the cost per event of a batch of 100, as the
// run's audit writer appends them (one lock, one write, one head), with
// no rotation.
func BenchmarkAppendBatch(b *testing.B) {
	l, err := Open(b.TempDir(), Options{MaxFileBytes: 1 << 40}) // no rotation: its cost is its own
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	batch := make([]Event, 100)
	for i := range batch {
		batch[i] = callEvent(i + 1)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := l.AppendAll(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/event")
}

// BenchmarkLine is the CPU of one call event's line without the file: it
// checked and reduced (prepare), encoded and hashed, as AppendAll does for
// each event of a batch.
func BenchmarkLine(b *testing.B) {
	e := callEvent(1)
	e.Contract = testDigest
	var (
		line []byte
		sn   seen
	)
	b.ReportAllocs()
	for b.Loop() {
		p, err := prepareSeen(e, 2, zeroHash, &sn)
		if err != nil {
			b.Fatal(err)
		}
		if line, err = encodeTo(line[:0], &p, &sn); err != nil {
			b.Fatal(err)
		}
		_ = lineHash(line)
	}
}
