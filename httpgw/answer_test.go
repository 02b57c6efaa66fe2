package httpgw

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAnswerForm: a client that accepts an event stream gets one, an
// answer that is all there is included (the conformance suite's
// server-sse-multiple-streams checks those streams: a JSON answer there
// would be a check that passes directly and not through the gateway); a
// request the server sends progress for first gets an event stream that
// ends with the answer; a client that accepts only JSON gets plain JSON
// with its length, in one piece.
func TestAnswerForm(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "forms", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "tick", Description: "Reports progress, then answers.", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ticked"}}}, nil
	})
	w, hdr, resp, body := sdkURLSession(t, s)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || len(sseFrames(body)) != 1 {
		t.Errorf("initialize answer: Content-Type %q, body %s", ct, body)
	}

	resp, body = w.do(t, req{path: "/docs", body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tick","arguments":{}}}`, header: hdr})
	if frames := sseFrames(body); resp.Header.Get("Content-Type") != "text/event-stream" || len(frames) != 1 || !strings.Contains(string(frames[0]), "ticked") {
		t.Errorf("sole answer: Content-Type %q, body %s", resp.Header.Get("Content-Type"), body)
	}
	jsonOnly := map[string]string{"Mcp-Session-Id": hdr["Mcp-Session-Id"], "Mcp-Protocol-Version": "2025-11-25", "Accept": "application/json"}
	resp, body = w.do(t, req{path: "/docs", body: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"tick","arguments":{}}}`, header: jsonOnly})
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" || resp.ContentLength != int64(len(body)) || !strings.Contains(string(body), "ticked") {
		t.Errorf("JSON only: Content-Type %q, length %d, body %s", ct, resp.ContentLength, body)
	}

	resp, body = w.do(t, req{path: "/docs", body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tick","arguments":{},"_meta":{"progressToken":"p1"}}}`, header: hdr})
	frames := sseFrames(body)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || len(frames) != 2 || !strings.Contains(string(frames[0]), "notifications/progress") || !strings.Contains(string(frames[1]), "ticked") {
		t.Errorf("progress, then the answer: Content-Type %q, body %s", ct, body)
	}

	sseOnly := map[string]string{"Mcp-Session-Id": hdr["Mcp-Session-Id"], "Mcp-Protocol-Version": "2025-11-25", "Accept": "text/event-stream"}
	resp, body = w.do(t, req{path: "/docs", body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"tick","arguments":{}}}`, header: sseOnly})
	frames = sseFrames(body)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || len(frames) != 1 || !strings.Contains(string(frames[0]), "ticked") {
		t.Errorf("event stream only: Content-Type %q, body %s", ct, body)
	}
}
