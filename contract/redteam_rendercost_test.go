package contract

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// renderOneChange renders the change between two versions of a tool and
// fails when it costs more than 250 ms or 64 MiB.
func renderOneChange(t *testing.T, name, oldRaw, newRaw string) {
	t.Helper()
	a, err := NewDefinition(Tools, []byte(oldRaw))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewDefinition(Tools, []byte(newRaw))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Canonical) > maxRenderBytes || len(b.Canonical) > maxRenderBytes {
		t.Fatalf("%s: %d/%d bytes: too large to render", name, len(a.Canonical), len(b.Canonical))
	}
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
	t.Logf("%s: %d/%d KiB, prettySize %d KiB: %v, %d MiB allocated, %d bytes written", name, len(a.Canonical)>>10, len(b.Canonical)>>10, prettySize(b.Canonical)>>10, took, alloc, out.Len())
	if took > 250*time.Millisecond*raceSlowdown || alloc > 64*raceAllocs {
		t.Errorf("%s: RenderDiff of one change under maxRenderBytes: %v and %d MiB (x50 before the block)", name, took, alloc)
	}
}

// TestRTRenderCost (red team): one change's diff, under maxRenderBytes,
// within a quarter of a second and 64 MiB, whatever its text: strings of
// invisible characters, deep nesting, and long lines that differ at their
// end (the line diff compared them to the end in every cell of its table:
// 0.17-0.33 s).
func TestRTRenderCost(t *testing.T) {
	del := strings.Repeat("\x7f", 60<<10)
	renderOneChange(t, "one DEL string", `{"name":"t","x":"a`+del+`"}`, `{"name":"t","x":"b`+del+`"}`)
	zw := strings.Repeat("\u200b", 20<<10)
	renderOneChange(t, "one ZWSP string", `{"name":"t","x":"a`+zw+`"}`, `{"name":"t","x":"b`+zw+`"}`)
	deepLines := func(depth, n int, v string) string {
		return `{"name":"t","x":` + strings.Repeat("[", depth) + strings.TrimSuffix(strings.Repeat(v+",", n), ",") + strings.Repeat("]", depth) + `}`
	}
	renderOneChange(t, "deep 240, 2040 lines", deepLines(215, 2040, `"a"`), deepLines(215, 2040, `"b"`))
	d28 := strings.Repeat("\x7f", 26)
	renderOneChange(t, "deep 230, 2040 DEL lines", deepLines(200, 2040, `"a`+d28+`"`), deepLines(200, 2040, `"b`+d28+`"`))
	d28z := strings.Repeat("\x7f", 26)
	renderOneChange(t, "2040 DEL lines tail-differing", deepLines(200, 2040, `"`+d28z+`a"`), deepLines(200, 2040, `"`+d28z+`b"`))
}

// TestRTRenderDiffOfDeepDefinition (red team): a definition of 62 KiB,
// under maxRenderBytes, nested 500 deep, pretty-printed to ~32,000 lines
// of ~1,000 spaces of indentation each, all escape-checked on both sides
// to print 400: 1.4 s and 593 MiB a change, fifty before the block.
func TestRTRenderDiffOfDeepDefinition(t *testing.T) {
	deep := func(v string) string {
		const depth = 500
		return `{"name":"t","x":` + strings.Repeat("[", depth) +
			strings.TrimSuffix(strings.Repeat(v+",", 31<<10), ",") + strings.Repeat("]", depth) + `}`
	}
	renderOneChange(t, "500 deep", deep("0"), deep("1"))
}
