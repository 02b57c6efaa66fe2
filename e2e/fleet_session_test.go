package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/internal/pgtest"
)

// roundRobin is a load balancer without session affinity in front of
// gateway replicas: each request goes to the replica target names, with
// that replica's launch token.
type roundRobin struct {
	gs     []*gateway
	target atomic.Int32
}

func (b *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	g := b.gs[b.target.Load()]
	u, _ := url.Parse(g.url)
	r = r.Clone(r.Context())
	r.URL.Host, r.Host = u.Host, u.Host
	r.Header.Set("Authorization", "Bearer "+g.token)
	return http.DefaultTransport.RoundTrip(r)
}

// sessionKeyFile writes a replicas' shared key file (mode 0600).
func sessionKeyFile(t *testing.T) string {
	t.Helper()
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		t.Fatal(err)
	}
	p := t.TempDir() + "/session.keys"
	if err := os.WriteFile(p, []byte("mcpseal session keys v1\nk1 "+base64.StdEncoding.EncodeToString(k[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFleetLegacySessionContinuedOnAnotherReplica: the go-sdk client
// opens a legacy session on replica A of a url route; with no affinity its
// next requests land on replica B, which continues the same upstream
// session (no second initialize upstream) after verifying the contract
// against the shared pin; a command route's session is still the replica's
// own and gets 404 on the other.
func TestFleetLegacySessionContinuedOnAnotherReplica(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Repeats text.", InputSchema: objectSchema(nil)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var mu sync.Mutex
	initializes, upstreamSessions := 0, map[string]bool{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			upstreamSessions[sid] = true
		} else if r.Method == http.MethodPost {
			initializes++
		}
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer up.Close()
	file := t.TempDir() + "/defs.json"
	baseDefs().write(t, file)
	routes, _ := json.Marshal(map[string]any{"routes": map[string]any{
		"remote": map[string]any{"url": up.URL + "/mcp", "private": true, "name": "remote"},
		"sdk":    map[string]any{"command": []string{bin.sdkserver, file}, "name": "sdk"},
	}})
	dsn := pgtest.DSN(t)
	migrate(t, dsn)
	keys := sessionKeyFile(t)
	gs := make([]*gateway, 2)
	var wg sync.WaitGroup
	for i := range gs {
		wg.Go(func() { gs[i] = startGateway(t, home(t), string(routes), "--state", dsn, "--session-key", keys) })
	}
	wg.Wait()
	if gs[0] == nil || gs[1] == nil {
		t.FailNow()
	}

	lb := &roundRobin{gs: gs}
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpseal-e2e-fleet", Version: "1.0.0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gs[0].url + "/remote", HTTPClient: &http.Client{Transport: lb}, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: legacy})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if !strings.HasPrefix(cs.ID(), "ms1.") {
		t.Fatalf("the url route's session id is not sealed: %.12q", cs.ID())
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	lb.target.Store(1)
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("listing on replica B: %v\nB's stderr:\n%s", err, gs[1].stderr.String())
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "echo" {
		t.Fatalf("replica B listed %+v", res.Tools)
	}
	out, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	if err != nil || out.IsError {
		t.Fatalf("call on replica B: %v %+v", err, out)
	}
	lb.target.Store(0)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil {
		t.Fatalf("call back on replica A: %v", err)
	}
	mu.Lock()
	if initializes != 1 || len(upstreamSessions) != 1 {
		t.Errorf("the upstream saw %d initializes and %d sessions; want one of each (B continues A's)", initializes, len(upstreamSessions))
	}
	mu.Unlock()

	// The command route: the child lives on A; B answers 404.
	cmd, err := gs[0].connect("sdk", legacy)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(cmd.ID(), "ms1.") {
		t.Fatal("a command route's session id is sealed")
	}
	status, body, err := gs[1].rawPostTo("sdk", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": cmd.ID(), "MCP-Protocol-Version": legacy})
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusNotFound {
		t.Fatalf("a foreign replica answered a command route's session with %d %s, want 404", status, body)
	}
	// A sealed id of the url route presented on the command route: 404 too.
	status, _, err = gs[1].rawPostTo("sdk", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": cs.ID(), "MCP-Protocol-Version": legacy})
	if err != nil || status != http.StatusNotFound {
		t.Fatalf("a url route's sealed id on the command route: %d %v, want 404", status, err)
	}
}

// TestFleetAuditRequiredRecoversWithTheDatabase: under a policy that
// requires the audit log, the database stops during traffic: calls are
// refused while it is away, allowed again once it is back, and the events
// of the outage (the refusals) reach the log after it returns, in one
// chain that verifies.
func TestFleetAuditRequiredRecoversWithTheDatabase(t *testing.T) {
	t.Parallel()
	cl, cs, dsn := verifiedOnOwnCluster(t, true)
	ctx := context.Background()
	call := func() error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		return err
	}
	calls := 1 // verifiedOnOwnCluster's
	cl.Stop()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		calls++
		if err = call(); err != nil {
			break
		}
	}
	if data := wantSDKError(t, err, -32009); data.Reason != "audit-unavailable" {
		t.Fatalf("refusal reason %q, want audit-unavailable", data.Reason)
	}
	for range 3 {
		calls++
		wantSDKError(t, call(), -32009)
	}
	cl.Start(t)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		calls++
		if err = call(); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls are still refused with the database back: %v", err)
		}
	}
	waitAudit(t, dsn, "call", calls)
	if out, errOut, code := mcpseal(t, home(t), "audit", "verify", "--state", dsn); code != 0 || !strings.Contains(out, "audit log ok") {
		t.Fatalf("audit verify --state: exit %d\n%s%s", code, out, errOut)
	}
}
