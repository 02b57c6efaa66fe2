package httpgw

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkGatewayAddedLatency measures one tools/call round trip of the
// go-sdk client against a go-sdk Streamable HTTP server directly and
// through the gateway (a private url route to the same server, the full
// gate on the path), alternating in one run, and reports both and their
// ratio:
//
//	go test -run '^$' -bench GatewayAddedLatency ./httpgw/
func BenchmarkGatewayAddedLatency(b *testing.B) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Repeats text.", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	b.Cleanup(up.Close) // after the gateway's own cleanup
	w := newWorld(b, `{"routes":{"docs":{"url":"`+up.URL+`/mcp","private":true}}}`, nil)

	ctx := context.Background()
	connect := func(endpoint string, rt http.RoundTripper) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: rt}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		return cs
	}
	direct := connect(up.URL+"/mcp", http.DefaultTransport)
	defer direct.Close()
	gated := connect(w.url+"/docs", bearer{testToken})
	defer gated.Close()
	call := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	call(direct)
	call(gated)
	var dt, gt time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dt += call(direct)
		gt += call(gated)
	}
	b.ReportMetric(float64(dt.Nanoseconds())/float64(b.N), "direct-ns/call")
	b.ReportMetric(float64(gt.Nanoseconds())/float64(b.N), "gateway-ns/call")
	b.ReportMetric(float64(gt)/float64(dt), "ratio")
}
