package contract

import (
	"fmt"
	"io"
	"testing"
	"time"
)

// TestRTRenderDiffIsLinearInChanges (red team): RenderDiff found each
// change's definitions by scanning the whole contract, so a drift of n
// changes cost n² before the client got its block (2.25 s for 20,000;
// about a minute at the gate's 100,000 definitions).
func TestRTRenderDiffIsLinearInChanges(t *testing.T) {
	t.Parallel()
	build := func(n int, v string) *Contract {
		defs := make([]Definition, n)
		for i := range defs {
			d, err := NewDefinition(Tools, []byte(fmt.Sprintf(`{"name":"tool-%06d","description":"%s","inputSchema":{"type":"object"}}`, i, v)))
			if err != nil {
				t.Fatal(err)
			}
			defs[i] = d
		}
		return New(map[Kind][]Definition{Tools: defs}, nil)
	}
	cost := func(n int) time.Duration {
		old, new := build(n, "a"), build(n, "b")
		ch := Compare(old, new)
		start := time.Now()
		if err := RenderDiff(io.Discard, old, new, ch); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	// Quadratic would be 16 times the cost for 4 times the changes.
	if r1, r2 := cost(5000), cost(20000); r2 > 8*r1 {
		t.Errorf("RenderDiff: %v for 5,000 changes, %v for 20,000", r1, r2)
	}
}
