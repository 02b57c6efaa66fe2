package tlog

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/contract"
)

// The benchmarks measure the log at one million entries (synthetic, in
// memory, so that they time the log and not the disk):
//
//	go test -run XXX -bench . -benchtime 2000x ./tlog/
//
// Building the million-entry log takes a minute on two cores; it is built
// once per run and shared.

const bigSize = 1 << 20

var big struct {
	once sync.Once
	st   *memStorage
	w    *Writer
	k    testKey
	err  error
	took time.Duration
}

// syntheticEntry returns a valid entry for server local:s<i> with no
// definitions: its digests do not depend on i, so it is built by
// substitution rather than canonicalization.
func syntheticEntry(tmpl string, i int) []byte {
	return []byte(strings.Replace(tmpl, "local:s0", fmt.Sprintf("local:s%d", i), 1))
}

func bigLog(b *testing.B) (*memStorage, *Writer) {
	big.once.Do(func() {
		start := time.Now()
		big.k = newKey(b, "bench.example/log")
		big.st, big.w = newLog(b, big.k)
		tmpl := string(benchTemplate(b))
		const batch = 1 << 12
		entries := make([][]byte, batch)
		for n := 0; n < bigSize; n += batch {
			for j := range entries {
				entries[j] = syntheticEntry(tmpl, n+j)
			}
			if _, err := big.w.Append(entries); err != nil {
				big.err = err
				return
			}
		}
		big.took = time.Since(start)
	})
	if big.err != nil {
		b.Fatal(big.err)
	}
	return big.st, big.w
}

// benchTemplate is the entry of server local:s0 with an empty contract.
func benchTemplate(b testing.TB) []byte {
	e := NewEntry("local:s0", nil, testEpoch, time.Time{}, "2025-06-18", contract.New(nil, nil))
	raw, err := e.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkAppendAt1M appends one entry at a time, each with its own
// signed checkpoint, to a log of a million entries.
func BenchmarkAppendAt1M(b *testing.B) {
	_, w := bigLog(b)
	b.Logf("built %d entries in %v (%.0f entries/s in batches of 4096)", bigSize, big.took, bigSize/big.took.Seconds())
	tmpl := string(benchTemplate(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := w.Append([][]byte{syntheticEntry(tmpl, bigSize+i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}

// BenchmarkProveAt1M builds and checks the inclusion proof of a random
// entry from the tiles, as a verifier holding only the checkpoint does.
func BenchmarkProveAt1M(b *testing.B) {
	st, w := bigLog(b)
	cur, err := w.Current()
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		idx := rng.Int64N(cur.Size)
		entry, err := ReadEntry(st, cur.Size, idx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Prove(st, cur.Checkpoint, idx, entry); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseEntry(b *testing.B) {
	e := testEntry(b, nil, 1)
	for i := 0; i < b.N; i++ {
		if _, err := ParseEntry(e); err != nil {
			b.Fatal(err)
		}
	}
}
