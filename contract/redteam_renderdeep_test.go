package contract

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestRTRenderDiffOfDeepDefinition (red team): a definition of 62 KiB,
// under maxRenderBytes, nested 500 deep, pretty-prints to ~32,000 lines of
// ~1,000 spaces of indentation each; RenderDiff builds and escape-checks
// all of them on both sides (VisibleText decodes every space as a rune and
// asks unicode.In of it) to print 400. One change cost 1.4 s and 593 MiB;
// run and the gateway render 50 before the client gets its block, the
// gateway under a lock every route's report takes, and review, lock and
// site render every change.
func TestRTRenderDiffOfDeepDefinition(t *testing.T) {
	deep := func(v string) Definition {
		const depth = 500
		raw := `{"name":"t","x":` + strings.Repeat("[", depth) +
			strings.TrimSuffix(strings.Repeat(v+",", 31<<10), ",") + strings.Repeat("]", depth) + `}`
		d, err := NewDefinition(Tools, []byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Canonical) > maxRenderBytes {
			t.Fatalf("%d bytes: too large to render", len(d.Canonical))
		}
		return d
	}
	a, b := deep("0"), deep("1")
	old, new := New(map[Kind][]Definition{Tools: {a}}, nil), New(map[Kind][]Definition{Tools: {b}}, nil)
	cs := Compare(old, new)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var out strings.Builder
	start := time.Now()
	if err := RenderDiff(&out, old, new, cs); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	alloc := (after.TotalAlloc - before.TotalAlloc) >> 20
	t.Logf("one change of %d KiB a side: %v, %d MiB allocated, %d bytes written", len(a.Canonical)>>10, took, alloc, out.Len())
	if took > 250*time.Millisecond || alloc > 64 {
		t.Errorf("RenderDiff of one 62 KiB change: %v and %d MiB (x50 before the block)", took, alloc)
	}
}
