package contract

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRTLabelPathsAreNotQuadratic (red team): collectText builds the
// member path of every array element and object key eagerly
// (fmt.Sprintf("%s[%d]", path, i), joinField), and keeps it with every
// string. One long member name over a long array makes that
// len(name) x len(array): a new tool of 250 KiB, inside the 256 KiB label
// budget, cost 16 GiB of allocation and 5.8 s of Compare; with strings in
// the array the paths are all live at once. The details quote at most
// 60 runes of a path.
func TestRTLabelPathsAreNotQuadratic(t *testing.T) {
	key := strings.Repeat("k", 32<<10)
	elems := strings.TrimSuffix(strings.Repeat(`"",`, 16<<10), ",") // 16,384 empty strings
	d, err := NewDefinition(Tools, []byte(`{"name":"t","inputSchema":{"type":"object"},"`+key+`":[`+elems+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Canonical) > maxLabelledBytes {
		t.Fatalf("%d bytes: over the budget", len(d.Canonical))
	}
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
		}
	}()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	ch := Compare(nil, New(map[Kind][]Definition{Tools: {d}}, nil))
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	close(stop)
	<-done
	if len(ch) != 1 {
		t.Fatalf("%d changes", len(ch))
	}
	alloc := (after.TotalAlloc - before.TotalAlloc) >> 20
	t.Logf("a new tool of %d KiB: Compare %v, %d MiB allocated, heap peak %d MiB", len(d.Canonical)>>10, took, alloc, peak.Load()>>20)
	if alloc > 256*raceAllocs || took > 2*time.Second*raceSlowdown {
		t.Errorf("labels of one %d KiB definition: %v and %d MiB allocated (peak heap %d MiB)", len(d.Canonical)>>10, took, alloc, peak.Load()>>20)
	}
}

// TestRTDefsPathIsNotQuadratic (red team): compareKeyword's $defs branch
// passes k+"."+d as the field and member+"."+k+"."+d as the member, both
// uncapped, so one long $defs key makes every keyword or property below it
// build a string of len(key) before capPath (joinField, metadata) cuts it.
func TestRTDefsPathIsNotQuadratic(t *testing.T) {
	key := strings.Repeat("k", 56<<10)
	side := func(v string) Definition {
		var b strings.Builder
		for i := 0; i < 6500; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"x%d":%s`, i, v)
		}
		d, err := NewDefinition(Tools, []byte(`{"name":"t","inputSchema":{"type":"object","$defs":{"`+key+`":{`+b.String()+`}}}}`))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b := side("0"), side("1")
	if n := len(a.Canonical) + len(b.Canonical); n > maxLabelledBytes {
		t.Fatalf("%d bytes: over the budget", n)
	}
	old, new := New(map[Kind][]Definition{Tools: {a}}, nil), New(map[Kind][]Definition{Tools: {b}}, nil)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	cs := Compare(old, new)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	alloc := (after.TotalAlloc - before.TotalAlloc) >> 20
	t.Logf("changed tool of %d KiB a side: Compare %v, %d MiB allocated, labels %v", len(a.Canonical)>>10, took, alloc, cs[0].Codes())
	if alloc > 256*raceAllocs || took > 2*time.Second*raceSlowdown {
		t.Errorf("labels of one changed definition under the budget: %v and %d MiB allocated", took, alloc)
	}
}
