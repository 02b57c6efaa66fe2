package egress

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// The tests in this file run the adapter against the official Go SDK's
// Streamable HTTP server (mcp.NewStreamableHTTPHandler), over TLS, in both
// protocol generations. They are interop tests: the peer is real.

// sdkServer is a go-sdk server with one tool whose "region" argument is
// mirrored into the Mcp-Param-Region header.
func sdkServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "interop", Version: "1.0.0"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`)
	s.AddTool(&mcp.Tool{Name: "where", Description: "Says where.", InputSchema: schema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Region string `json:"region"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "in " + args.Region}}}, nil
	})
	return s
}

// recorder keeps the method and headers of every request the server got.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method string
	header http.Header
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.reqs = append(r.reqs, recorded{req.Method, req.Header.Clone()})
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
}

func (r *recorder) find(method, mcpMethod string) (http.Header, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.reqs {
		if x.method == method && (mcpMethod == "" || x.header.Get("Mcp-Method") == mcpMethod) {
			return x.header, true
		}
	}
	return nil, false
}

func wantResult(t *testing.T, m jsonrpc.Message, contains string) {
	t.Helper()
	if m.Result == nil {
		t.Fatalf("got error %s", m.Error)
	}
	if !strings.Contains(string(m.Result), contains) {
		t.Errorf("result %s lacks %q", m.Result, contains)
	}
}

// TestInteropLegacySession: initialize, the session id, the GET stream,
// listing and calling, DELETE when the gate hangs up.
func TestInteropLegacySession(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	// The server listens on loopback but is reached as mcp.example.com:
	// its own DNS-rebinding check would refuse that Host.
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdkServer() }, &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true})
	srv := httptest.NewTLSServer(rec.wrap(h))
	defer srv.Close()
	up, _ := upstreamTo(t, srv, resolveTo(publicIP.String()), Options{})
	p := newPeer(t, up)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	wantResult(t, p.answer(), `"protocolVersion":"2025-11-25"`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	wantResult(t, p.answer(), `"where"`)
	p.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"where","arguments":{"region":"eu"}}}`)
	wantResult(t, p.answer(), "in eu")
	waitFor(t, func() bool { _, ok := rec.find("GET", ""); return ok }, "the GET stream")
	h2, _ := rec.find("POST", "")
	if h2.Get("Mcp-Session-Id") != "" {
		t.Error("initialize carried a session id")
	}
	up.Stdin().Close()
	if err := waitDone(up); err != nil {
		t.Fatal(err)
	}
	del, ok := rec.find("DELETE", "")
	if !ok || del.Get("Mcp-Session-Id") == "" || del.Get("Mcp-Protocol-Version") != "2025-11-25" {
		t.Errorf("DELETE = %v, %v; want one with the session id and version", ok, del)
	}
}

// TestInteropModernStateless: 2026-07-28 requests carry the version from
// their _meta and the Mcp-Method, Mcp-Name and Mcp-Param-* headers the
// SDK checks against the body.
func TestInteropModernStateless(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdkServer() }, &mcp.StreamableHTTPOptions{Stateless: true, DisableLocalhostProtection: true})
	srv := httptest.NewTLSServer(rec.wrap(h))
	defer srv.Close()
	up, _ := upstreamTo(t, srv, resolveTo(publicIP.String()), Options{})
	p := newPeer(t, up)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	p.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`)
	wantResult(t, p.answer(), `"supportedVersions"`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`)
	wantResult(t, p.answer(), `"x-mcp-header"`)
	for i, region := range []string{"eu", " café "} {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"where","arguments":{"region":%q,"n":7},%s}}`, 3+i, region, meta))
		wantResult(t, p.answer(), "in "+region)
	}
	call, ok := rec.find("POST", "tools/call")
	if !ok {
		t.Fatal("no tools/call with Mcp-Method")
	}
	for k, want := range map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Name": "where", "Mcp-Param-Region": "eu", "Mcp-Param-N": "7"} {
		if got := call.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if _, ok := rec.find("GET", ""); ok {
		t.Error("a GET stream was opened for a modern session")
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 5s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
