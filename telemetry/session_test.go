package telemetry

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// BenchmarkTracedToolCall is what traces and metrics add to one
// tools/call through the gate (issue 16): the observer's four steps, with
// spans exported to a collector that discards them.
func BenchmarkTracedToolCall(b *testing.B) {
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer col.Close()
	benchToolCall(b, Config{OTLPEndpoint: col.URL, MetricsListen: "127.0.0.1:0", Getenv: func(string) string { return "" }})
}

// BenchmarkMeteredToolCall is what metrics alone add to one tools/call.
func BenchmarkMeteredToolCall(b *testing.B) {
	benchToolCall(b, Config{MetricsListen: "127.0.0.1:0", Getenv: func(string) string { return "" }})
}

func benchToolCall(b *testing.B, cfg Config) {
	tel, err := Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer tel.Close()
	s := tel.Session("bench", "bench")
	defer s.Close()
	req := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	resp := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}]}}`)
	mreq, err := jsonrpc.Peek(req)
	if err != nil {
		b.Fatal(err)
	}
	mresp, err := jsonrpc.Peek(resp)
	if err != nil {
		b.Fatal(err)
	}
	up, down := []gate.Out{{To: gate.ToServer, Frame: req}}, []gate.Out{{To: gate.ToClient, Frame: resp}}
	b.ReportAllocs()
	for b.Loop() {
		s.Took(gate.ToClient, mreq)
		s.Emitted(up)
		s.Took(gate.ToServer, mresp)
		s.Emitted(down)
	}
}

// TestRepeatedTraceparentIsIgnored: a _meta with traceparent twice (one
// for the gate, one for the server?) continues no trace; one well-formed
// traceparent does.
func TestRepeatedTraceparentIsIgnored(t *testing.T) {
	t.Parallel()
	tel, err := Start(Config{MetricsListen: "127.0.0.1:0", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	s := tel.Session("id", "label")
	defer s.Close()
	const tp = `"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`
	for _, meta := range []string{`{"traceparent":` + tp + `}`, `{"\u0074raceparent":` + tp + `}`, `{"a\"b":1,"traceparent":` + tp + `}`} {
		if _, _, ok := s.clientContext([]byte(meta), headerContext{}); !ok {
			t.Fatalf("%s: a well-formed traceparent was not read", meta)
		}
	}
	// Without the name spelled out or escaped, nothing is read and nothing
	// counted (the fast path), as the full read would answer.
	for _, meta := range []string{`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, `{"a":1,"a":2}`, `[1]`, `{`} {
		if _, _, ok := s.clientContext([]byte(meta), headerContext{}); ok || ignoredContexts(s.t.m) != 0 {
			t.Errorf("%s: read %v, %d counted", meta, ok, ignoredContexts(s.t.m))
		}
	}
	for _, meta := range []string{
		`{"traceparent":` + tp + `,"traceparent":"00-11111111111111111111111111111111-2222222222222222-01"}`,
		`{"traceparent":` + tp + `,"tracestate":"a=1","tracestate":"b=2"}`,
		`{"traceparent":` + tp + `,}`,
		`[` + tp + `]`,
	} {
		if _, _, ok := s.clientContext([]byte(meta), headerContext{}); ok {
			t.Errorf("%s: continued a trace", meta)
		}
	}
}

// ignoredContexts is mcpseal_trace_context_ignored_total.
func ignoredContexts(m *metrics) uint64 {
	return m.badContext.series.get(labels{}, newUint).Load()
}
