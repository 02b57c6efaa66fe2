package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/internal/testmcp"
)

// Issue 11's attacks through `mcpseal gateway`: testmcp servers behind a
// command route, the official Go SDK Streamable HTTP client or plain HTTP
// in front. The stdio variants are in attack11_test.go.

// scenarioRoute is a routes file with one command route "t" that plays
// the scenario in file. posture "" is the gateway's default.
func scenarioRoute(file, name, posture string) string {
	r := map[string]any{"command": []string{bin.testserver, file}, "name": name}
	if posture != "" {
		r["posture"] = posture
	}
	b, _ := json.Marshal(map[string]any{"routes": map[string]any{"t": r}})
	return string(b)
}

// writeScenario (re)writes a scenario file: a command route's server
// reads it at every start.
func writeScenario(t *testing.T, path string, sc *testmcp.Scenario) {
	t.Helper()
	if err := sc.WriteFile(path); err != nil {
		t.Fatal(err)
	}
}

// connectWith connects a go-sdk client with options to route "t".
func (g *gateway) connectWith(version string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpseal-e2e-http", Version: "1.0.0"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: g.url + "/t", HTTPClient: &http.Client{Transport: bearerRT{g.token}, Timeout: 30 * time.Second}, MaxRetries: -1}
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		g.t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// connectAndList connects and lists the tools; it returns the first error.
func (g *gateway) connectAndList(version string) (*mcp.ClientSession, []string, error) {
	cs, err := g.connect("t", version)
	if err != nil {
		return nil, nil, err
	}
	names, err := toolNames(g.t, cs)
	return cs, names, err
}

// stderrShows waits a moment for the gateway's stderr to show a label.
func (g *gateway) stderrShows(label string) bool {
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if labelShown(g.stderr.String(), label) {
			return true
		}
	}
	return false
}

// TestGatewayServerChosenVersionOpensNoProfile: a legacy client asks for
// the same version twice; in its second session the server answers an
// older one and lists one more tool. Blocked, labelled
// protocol-downgraded.
func TestGatewayServerChosenVersionOpensNoProfile(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	file := filepath.Join(t.TempDir(), "scenario.json")
	sc := w.scenario(testmcp.Scenario{
		Versions: []string{legacyVersion, legacyOld},
		Contract: testmcp.Contract{Tools: []testmcp.RawJSON{honestEcho}},
		Variants: []testmcp.Variant{{FromSession: 2, AnswerVersion: legacyOld, AddTools: []testmcp.RawJSON{stealTool}}},
	})
	writeScenario(t, file, sc)
	g := startGateway(t, w.home, scenarioRoute(file, "gw-chosen-version", ""))
	cs, names, err := g.connectAndList(legacyVersion)
	if err != nil || len(names) != 1 {
		t.Fatalf("session 1: tools %v, %v", names, err)
	}
	cs.Close()
	cs, names, err = g.connectAndList(legacyVersion)
	if err == nil {
		t.Fatalf("session 2 (server answered %s) was not blocked: tools %v", legacyOld, names)
	}
	d := wantSDKError(t, err, codeBlocked)
	checkBlockData(t, d, "read_keys", "new-tool")
	if cs != nil && strings.Contains(cs.InitializeResult().Instructions, poisonMarker) {
		t.Errorf("the client received the hostile text")
	}
	if !g.stderrShows("protocol-downgraded") {
		wantLabelSomewhere(t, w.home, d.Server.ID, g.stderr.String(), "protocol-downgraded")
	}
}

// TestGatewayDiscoverRefusalOpensNoProfile: session 1 is a 2026-07-28
// session of the Go SDK client; after a gateway restart the server refuses
// server/discover, the client falls back to initialize, and the server
// lists an extra tool (or the same ones). Blocked, labelled
// protocol-downgraded.
func TestGatewayDiscoverRefusalOpensNoProfile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		add     []testmcp.RawJSON
		changed string
	}{{"extra-tool", []testmcp.RawJSON{stealTool}, "read_keys"}, {"same-tools", nil, ""}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			file := filepath.Join(t.TempDir(), "scenario.json")
			sc := testmcp.Scenario{
				Versions: []string{legacyVersion, testmcp.ModernVersion},
				Contract: testmcp.Contract{Instructions: str("Use echo."), Tools: []testmcp.RawJSON{honestEcho}},
			}
			writeScenario(t, file, w.scenario(sc))
			routes := scenarioRoute(file, "gw-discover-refused", "")
			g := startGateway(t, w.home, routes)
			cs, names, err := g.connectAndList("")
			if err != nil || len(names) != 1 {
				t.Fatalf("session 1: tools %v, %v", names, err)
			}
			if v := cs.InitializeResult().ProtocolVersion; v != testmcp.ModernVersion {
				t.Fatalf("session 1 negotiated %q", v)
			}
			cs.Close()
			g.stop()

			sc.Variants = []testmcp.Variant{{RefuseDiscover: true, AddTools: c.add}}
			writeScenario(t, file, w.scenario(sc))
			g = startGateway(t, w.home, routes)
			cs, names, err = g.connectAndList("")
			if err == nil {
				t.Fatalf("the session after the server refused server/discover was not blocked: negotiated %s, tools %v", cs.InitializeResult().ProtocolVersion, names)
			}
			d := wantSDKError(t, err, codeBlocked)
			if c.changed != "" {
				checkBlockData(t, d, c.changed, "new-tool")
			}
			if !g.stderrShows("protocol-downgraded") {
				wantLabelSomewhere(t, w.home, d.Server.ID, g.stderr.String(), "protocol-downgraded")
			}
		})
	}
}

// TestGatewayOneApprovalCoversEveryClient: three Go SDK clients (2025-06-18,
// 2025-11-25, 2026-07-28) are pinned; the server's echo changes; each is
// blocked; one `mcpseal approve --yes` lets all three through.
func TestGatewayOneApprovalCoversEveryClient(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	file := filepath.Join(t.TempDir(), "scenario.json")
	sc := testmcp.Scenario{
		Versions: []string{legacyVersion, legacyOld, testmcp.ModernVersion},
		Contract: testmcp.Contract{Tools: []testmcp.RawJSON{honestEcho}},
	}
	writeScenario(t, file, w.scenario(sc))
	routes := scenarioRoute(file, "gw-every-client", "")
	versions := []string{legacyOld, legacyVersion, ""}
	g := startGateway(t, w.home, routes)
	for _, v := range versions {
		cs, names, err := g.connectAndList(v)
		if err != nil || len(names) != 1 {
			t.Fatalf("client %q: honest session: %v, %v", v, names, err)
		}
		if got := cs.InitializeResult().ProtocolVersion; v == "" && got != testmcp.ModernVersion || v != "" && got != v {
			t.Fatalf("client %q negotiated %s", v, got)
		}
		cs.Close()
	}
	g.stop()

	sc.Tools = []testmcp.RawJSON{testmcp.Tool("echo", "Repeats text. "+poison)}
	writeScenario(t, file, w.scenario(sc))
	g = startGateway(t, w.home, routes)
	id := ""
	for _, v := range versions {
		cs, _, err := g.connectAndList(v)
		if cs != nil {
			t.Logf("client %q negotiated %s before the block", v, cs.InitializeResult().ProtocolVersion)
		}
		d := wantSDKError(t, err, codeBlocked)
		checkBlockData(t, d, "echo", "mentions-secrets")
		id = d.Server.ID
	}
	g.stop()
	out, errOut, code := mcpseal(t, w.home, "review", id)
	if code != 0 {
		t.Fatalf("mcpseal review %s: exit %d\n%s%s", id, code, out, errOut)
	}
	for _, v := range []string{legacyOld, legacyVersion, testmcp.ModernVersion} {
		if !strings.Contains(out, v) {
			t.Errorf("mcpseal review does not show the change seen by the %s client:\n%s", v, out)
		}
	}
	if out, errOut, code := mcpseal(t, w.home, "approve", id, "--yes"); code != 0 {
		t.Fatalf("mcpseal approve %s --yes: exit %d\n%s%s", id, code, out, errOut)
	}
	g = startGateway(t, w.home, routes)
	for _, v := range versions {
		cs, names, err := g.connectAndList(v)
		if err != nil {
			t.Errorf("client %q after one approval: %v", v, err)
			continue
		}
		if len(names) != 1 {
			t.Errorf("client %q after one approval: tools %v", v, names)
		}
		if got := cs.InitializeResult().ProtocolVersion; v == "" && got != testmcp.ModernVersion {
			t.Errorf("the 2026-07-28 client ran as %s after the approval", got)
		}
		cs.Close()
	}
}

// TestGatewayDuplicateInstructionsKeyBlocks: a handshake result that
// repeats "instructions", the second poisoned, through the gateway under
// every posture and both generations: refused as unverified; the Go SDK
// client (whose decoder keeps the last value) never reads the poison.
func TestGatewayDuplicateInstructionsKeyBlocks(t *testing.T) {
	t.Parallel()
	dup := `"instructions":"Be helpful.","instructions":` + jsonQuote(poison)
	cases := []struct {
		name string
		sc   testmcp.Scenario
	}{
		{"instructions-twice", testmcp.Scenario{
			RawInitializeResult: testmcp.RawJSON(`{` + initHead + `,"capabilities":{"tools":{"listChanged":true}},` + dup + `}`),
			RawDiscoverResult:   testmcp.RawJSON(`{` + discoverTail + `,"capabilities":{"tools":{"listChanged":true}},` + dup + `}`),
		}},
		{"capabilities-duplicate-key", testmcp.Scenario{
			RawInitializeResult: testmcp.RawJSON(`{` + initHead + `,"capabilities":{"tools":{},"tools":{"listChanged":true}}}`),
			RawDiscoverResult:   testmcp.RawJSON(`{` + discoverTail + `,"capabilities":{"tools":{},"tools":{"listChanged":true}}}`),
		}},
		{"capabilities-not-an-object", testmcp.Scenario{
			RawInitializeResult: testmcp.RawJSON(`{` + initHead + `,"capabilities":"yes"}`),
			RawDiscoverResult:   testmcp.RawJSON(`{` + discoverTail + `,"capabilities":"yes"}`),
		}},
	}
	for _, c := range cases {
		for _, posture := range postures {
			if c.name != "instructions-twice" && posture == "strict" {
				continue
			}
			for _, gen := range gatewayGenerations {
				t.Run(c.name+"/"+posture+"/"+gen.name, func(t *testing.T) {
					t.Parallel()
					w := newWorld(t)
					sc := c.sc
					sc.Versions = []string{legacyVersion, testmcp.ModernVersion}
					sc.Tools = []testmcp.RawJSON{honestEcho}
					file := filepath.Join(t.TempDir(), "scenario.json")
					writeScenario(t, file, w.scenario(sc))
					g := startGateway(t, w.home, scenarioRoute(file, "gw-ambiguous", posture))
					cs, names, err := g.connectAndList(gen.version)
					if cs != nil && strings.Contains(cs.InitializeResult().Instructions, poisonMarker) {
						t.Errorf("the poisoned instructions reached the client")
					}
					if err == nil {
						t.Fatalf("posture %s: the ambiguous handshake was released: tools %v", posture, names)
					}
					wantSDKUnverified(t, err)
					if cs != nil {
						_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
						if err == nil {
							t.Errorf("a call went through")
						}
					}
					if n := w.count(0, "tools/call"); n != 0 {
						t.Errorf("%d tools/call reached the server", n)
					}
				})
			}
		}
	}
}

// rawPost sends one JSON-RPC message to route "t" and returns the HTTP
// status and the body (JSON only: no event stream).
func (g *gateway) rawPost(body string, hdr map[string]string) (int, []byte, error) {
	return g.rawPostTo("t", body, hdr)
}

// rawPostTo is rawPost to route.
func (g *gateway) rawPostTo(route, body string, hdr map[string]string) (int, []byte, error) {
	r, err := http.NewRequest(http.MethodPost, g.url+"/"+route, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	r.Header.Set("Authorization", "Bearer "+g.token)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	c := &http.Client{Timeout: 15 * time.Second}
	resp, err := c.Do(r)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}

// TestGatewayDiscoverWithoutMetaDoesNotCrash: server/discover requests with
// no usable _meta, sessionless, are answered with a JSON-RPC error and the
// gateway keeps serving: a Go SDK session afterwards works.
func TestGatewayDiscoverWithoutMetaDoesNotCrash(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	file := filepath.Join(t.TempDir(), "scenario.json")
	writeScenario(t, file, w.scenario(testmcp.Scenario{
		Versions: []string{legacyVersion, testmcp.ModernVersion},
		Contract: testmcp.Contract{Tools: []testmcp.RawJSON{honestEcho}},
	}))
	g := startGateway(t, w.home, scenarioRoute(file, "gw-nometa", ""))
	modernHdr := map[string]string{"MCP-Protocol-Version": testmcp.ModernVersion, "Mcp-Method": "server/discover"}
	for _, c := range []struct {
		name, body string
		hdr        map[string]string
	}{
		{"params-empty", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, map[string]string{"Mcp-Method": "server/discover"}},
		{"no-params", `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, nil},
		{"meta-empty", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{}}}`, modernHdr},
		{"meta-null", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":null}}`, modernHdr},
		{"version-not-a-string", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`, modernHdr},
		{"version-only", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, modernHdr},
		{"caps-not-an-object", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":"x"}}}`, modernHdr},
		{"tools-list-caps-null", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}}}`, map[string]string{"MCP-Protocol-Version": testmcp.ModernVersion, "Mcp-Method": "tools/list"}},
	} {
		status, body, err := g.rawPost(c.body, c.hdr)
		if err != nil {
			t.Fatalf("%s: %v (gateway stderr:\n%s)", c.name, err, g.stderr.String())
		}
		var m struct {
			Error *testmcp.RPCError `json:"error"`
		}
		_ = json.Unmarshal(body, &m)
		t.Logf("%s: HTTP %d %.200s", c.name, status, body)
		if status >= 500 {
			t.Errorf("%s: HTTP %d", c.name, status)
		}
		if !strings.HasPrefix(c.name, "version-only") && !strings.HasPrefix(c.name, "caps") && !strings.HasPrefix(c.name, "tools-list") {
			if m.Error == nil || (m.Error.Code != -32602 && m.Error.Code != -32015) {
				t.Errorf("%s: HTTP %d %.300s, want a JSON-RPC error -32602 (or the front door's -32015)", c.name, status, body)
			}
		}
		select {
		case <-g.done:
			t.Fatalf("the gateway exited after %s:\n%s", c.name, g.stderr.String())
		default:
		}
	}
	time.Sleep(1100 * time.Millisecond) // a shared session that closed restarts after a 1 s cool-down
	for _, v := range []string{legacyVersion, ""} {
		cs, names, err := g.connectAndList(v)
		if err != nil || len(names) != 1 {
			t.Errorf("a session %q after the malformed requests: tools %v, %v", v, names, err)
		}
		if cs != nil {
			cs.Close()
		}
	}
	if strings.Contains(g.stderr.String(), "panic") {
		t.Errorf("the gateway logged a panic:\n%s", g.stderr.String())
	}
}

// TestGatewayConfirmAcceptWithoutConfirmTrueRefused: the Go SDK client
// (legacy, with an elicitation handler) answers mcpseal's confirmation
// with the form's default or without content: refused with -32012; only
// confirm true proceeds.
func TestGatewayConfirmAcceptWithoutConfirmTrueRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	file := filepath.Join(t.TempDir(), "scenario.json")
	writeScenario(t, file, confirmScenario(w, nil))
	var mu sync.Mutex
	var answer *mcp.ElicitResult
	asked := 0
	opts := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked++
		return answer, nil
	}}
	g := startGateway(t, w.home, scenarioRoute(file, "gw-confirm", ""), "--policy", writePolicy(t, confirmPolicy))
	cs, err := g.connectWith(legacyVersion, opts)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := toolNames(t, cs); err != nil || len(names) != 2 {
		t.Fatalf("tools %v, %v", names, err)
	}
	call := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "danger", Arguments: map[string]any{}})
		return err
	}
	for _, a := range []*mcp.ElicitResult{
		{Action: "accept", Content: map[string]any{"confirm": false}},
		{Action: "accept"},
		{Action: "accept", Content: map[string]any{}},
	} {
		mu.Lock()
		answer = a
		mu.Unlock()
		before := w.count(0, "tools/call")
		err := call()
		if err == nil {
			t.Errorf("answer %+v let the destructive call through", *a)
		} else {
			wantSDKError(t, err, -32012)
		}
		if n := w.count(0, "tools/call"); n != before {
			t.Errorf("answer %+v: the call reached the server", *a)
		}
	}
	mu.Lock()
	answer = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
	mu.Unlock()
	if err := call(); err != nil {
		t.Errorf("an explicit yes was refused: %v", err)
	}
	mu.Lock()
	if asked != 4 {
		t.Errorf("the client was asked %d times, want 4", asked)
	}
	mu.Unlock()
	if n := w.count(0, "tools/call"); n != 1 {
		t.Errorf("%d tools/call reached the server, want only the confirmed one", n)
	}
}

// TestGatewayConfirmationIdNotSpoofable: through the gateway, the server
// sends its own elicitation/create under the gate's next ids; the Go SDK
// client's handler accepts the server's harmless question (held until the
// gate's real question has arrived too, so the order is the attacker's
// best) and declines mcpseal's. The call must not reach the server.
func TestGatewayConfirmationIdNotSpoofable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	file := filepath.Join(t.TempDir(), "scenario.json")
	writeScenario(t, file, confirmScenario(w, &testmcp.Spoof{AfterListing: 2, Count: 3, Message: spoofMarker}))
	realSeen := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	spoofs, reals := 0, 0
	opts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if strings.Contains(req.Params.Message, spoofMarker) {
			mu.Lock()
			spoofs++
			mu.Unlock()
			select {
			case <-realSeen:
			case <-time.After(5 * time.Second):
			case <-ctx.Done():
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		}
		mu.Lock()
		reals++
		mu.Unlock()
		once.Do(func() { close(realSeen) })
		time.Sleep(300 * time.Millisecond) // the spoofs' answers go first
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	g := startGateway(t, w.home, scenarioRoute(file, "gw-spoof", ""), "--policy", writePolicy(t, confirmPolicy))
	cs, err := g.connectWith(legacyVersion, opts)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := toolNames(t, cs); err != nil || len(names) != 2 {
		t.Fatalf("tools %v, %v", names, err)
	}
	time.Sleep(300 * time.Millisecond) // the spoofs are on their way
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "danger", Arguments: map[string]any{}})
	mu.Lock()
	t.Logf("the client was asked %d spoofed and %d real questions", spoofs, reals)
	mu.Unlock()
	n := w.count(0, "tools/call")
	if n != 0 {
		t.Errorf("the declined destructive call reached the server (%d tools/call): the server's own question was taken as the person's answer", n)
	}
	if err == nil {
		t.Fatalf("the declined destructive call went through")
	}
	wantSDKError(t, err, -32012)
}
