package gate_test

import (
	"fmt"
	"testing"

	"github.com/mcpseal/mcpseal/pin"
)

// BenchmarkCallRoundTrip measures what the gate adds to one tools/call:
// peeking the request, the verified-tool check, correlation, and the
// response's way back, on a verified session with 40 tools.
func BenchmarkCallRoundTrip(b *testing.B) {
	tools := make([]string, 40)
	for i := range tools {
		tools[i] = fmt.Sprintf(`{"name":"tool_%02d","description":"Searches documents.","inputSchema":{"type":"object","properties":{"query":{"type":"string"}}}}`, i)
	}
	t := &testing.T{}
	srv := newFakeServer(tools...)
	h := newHarness(t, b.TempDir(), pin.Guard, srv)
	h.legacySession(initLegacy)
	req := []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"tool_17","arguments":{"query":"weather in Oslo"}}}`)
	resp := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"Sunny, 4 degrees."}],"isError":false}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(req) + len(resp)))
	for b.Loop() {
		if out := h.s.FromClient(req); len(out) != 1 {
			b.Fatalf("request: %d frames", len(out))
		}
		if out := h.s.FromServer(resp); len(out) != 1 {
			b.Fatalf("response: %d frames", len(out))
		}
	}
}
