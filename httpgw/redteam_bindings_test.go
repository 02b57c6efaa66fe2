package httpgw

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAttackHiddenToolToldApartByItsHeaderBindings: the route's x-mcp-header
// bindings are learned from the gate's whole listing, hidden tools
// included, and checked at the front door before the gate's hidden check.
// bob (ops) may not see mutate, whose "text" argument is mirrored into
// Mcp-Param-Text. He calls mutate and a made-up name with the same
// arguments and no Mcp-Param-Text header: the hidden tool is refused 400
// header-mismatch, the missing one as not in the contract. bob learns
// that mutate exists, and by trying argument names, which of its
// arguments the schema binds.
func TestAttackHiddenToolToldApartByItsHeaderBindings(t *testing.T) {
	t.Parallel()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "bound", Version: "1"}, nil)
		open := map[string]any{"type": "object"}
		bound := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","x-mcp-header":"Text"}}}`)
		ok := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		}
		s.AddTool(&mcp.Tool{Name: "echo", Description: "Repeats text.", InputSchema: open}, ok)
		s.AddTool(&mcp.Tool{Name: "mutate", Description: "Changes things.", InputSchema: bound}, ok)
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true, DisableLocalhostProtection: true})
	up := httptest.NewTLSServer(h)
	t.Cleanup(up.Close)
	port := up.URL[strings.LastIndexByte(up.URL, ':')+1:]
	w := newTeamWorld(t, routedTo(t, fmt.Sprintf(`{"routes":{"docs":{"url":"https://mcp.example.com:%s/mcp","private":true,"name":"docs"}}}`, port), up.Certificate(), restrictMutate{}))
	bob := w.token(t, "bob-app")
	// Any caller's listing teaches the route its bindings; bob's own will do.
	if got := w.listModern(t, bob, 1, `{}`); !strings.Contains(got, `"echo"`) || strings.Contains(got, "mutate") {
		t.Fatalf("bob's listing: %.300s", got)
	}
	ask := func(tool string) string {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":%q,"arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, tool)
		resp, b, err := w.modern(t, context.Background(), bob, "tools/call", tool, body)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), strings.ReplaceAll(string(b), tool, "NAME"))
	}
	if hidden, missing := ask("mutate"), ask("nosuch"); hidden != missing {
		t.Fatalf("the hidden tool's answer\n%s\ndiffers from the missing tool's\n%s", hidden, missing)
	}
}
