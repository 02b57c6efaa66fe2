package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/pin"
)

// TestRTDriftReportIsBounded (red team): a server that changes a whole
// large contract had every change's diff written to stderr, up to 400
// lines each, before the block; the report shows the first
// maxDriftShown and points at mcpseal review for the rest.
func TestRTDriftReportIsBounded(t *testing.T) {
	t.Parallel()
	build := func(v string) *contract.Contract {
		var defs []contract.Definition
		for i := range maxDriftShown + 10 {
			d, err := contract.NewDefinition(contract.Tools, []byte(fmt.Sprintf(`{"name":"t%03d","description":"%s","inputSchema":{"type":"object"}}`, i, v)))
			if err != nil {
				t.Fatal(err)
			}
			defs = append(defs, d)
		}
		return contract.New(map[contract.Kind][]contract.Definition{contract.Tools: defs}, nil)
	}
	old, new := build("a"), build("b")
	var b strings.Builder
	r := &reporter{w: &b, id: pin.IdentityForName("big")}
	r.drift(gate.DriftReport{Result: pin.Result{Outcome: pin.Drift, Pinned: old, Changes: contract.Compare(old, new)}, Observed: new})
	out := b.String()
	if n := strings.Count(out, "\nchanged tool "); n != maxDriftShown {
		t.Fatalf("%d changes shown, want %d:\n%s", n, maxDriftShown, out)
	}
	if !strings.Contains(out, "10 more changes, not shown in full (mcpseal review "+r.id.ID+" shows them all):") ||
		strings.Count(out, "\n    changed tool t0") != 10 {
		t.Fatalf("no pointer to the rest:\n%s", out)
	}
}
