package pin

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/contract"
)

// benchContract is the benchmark's listing (internal/benchtool's
// definitions): an echo tool and 39 realistic others.
func benchContract(b *testing.B) *contract.Contract {
	defs := []contract.Definition{tool(b, "echo", "Repeats the text it is given.")}
	for i := 1; i < 40; i++ {
		raw, err := json.Marshal(map[string]any{
			"name":        fmt.Sprintf("tool_%05d", i),
			"title":       fmt.Sprintf("Tool %d", i),
			"description": strings.Repeat("Searches the project's documents and returns matching passages with their paths. ", 3),
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"query": map[string]any{"type": "string", "description": "What to look for", "maxLength": 500},
				"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
				"paths": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			}, "required": []string{"query"}},
			"annotations": map[string]any{"readOnlyHint": true, "openWorldHint": false},
		})
		if err != nil {
			b.Fatal(err)
		}
		defs = append(defs, def(b, contract.Tools, string(raw)))
	}
	return contractOf(ptrTo("Use these tools to search documents."), defs...)
}

// BenchmarkObservePinned is a session's pin check of a pinned 40-tool
// server: what every `mcpseal run` does before its first listing.
func BenchmarkObservePinned(b *testing.B) {
	s, id, c := benchPinned(b)
	for b.Loop() {
		benchMatch(b, s, id, c)
	}
}

// benchPinned is a store with the benchmark's contract pinned.
func benchPinned(b *testing.B) (*Store, Identity, *contract.Contract) {
	s, _ := openStore(b)
	id := IdentityForName("bench")
	c := benchContract(b)
	observe(b, s, id, profileA, c, Guard)
	b.ReportAllocs()
	return s, id, c
}

func benchMatch(b *testing.B, s *Store, id Identity, c *contract.Contract) {
	res, err := s.Observe(id, obsOf(profileA), c, Guard, t0)
	if err != nil || res.Outcome != Match {
		b.Fatal(res.Outcome, err)
	}
}

// BenchmarkObservePrefetched is the same check when Prefetch has read the
// record while the server started (what `mcpseal run` does): the time
// left on the path to the first listing.
func BenchmarkObservePrefetched(b *testing.B) {
	s, id, c := benchPinned(b)
	for b.Loop() {
		b.StopTimer()
		s.Prefetch(id.ID)
		<-s.pre.p.Load().done
		b.StartTimer()
		benchMatch(b, s, id, c)
	}
}
