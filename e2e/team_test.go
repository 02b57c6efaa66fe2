package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/internal/testoauth"
)

// The tests in this file run `mcpseal gateway` as a team gateway — TLS,
// --auth with a test authorization server (internal/testoauth), a host
// policy with two groups — between OAuth clients (the TypeScript SDK's and
// the go-sdk's own OAuth support) and sdkserver behind a command route.

// codeUnknownTool: a call of a tool the caller may not see is answered as
// one of a tool the server does not have (docs/error-codes.md).
const codeUnknownTool = -32006

// teamPolicy: group eng sees and calls both of sdkserver's tools; group
// ops only echo, at most 3 calls a minute per caller.
const teamPolicy = `{"version": 1,
  "subjects": {"eng": {"groups": ["eng"]}, "ops": {"groups": ["ops"]}},
  "servers": {"sdk": {"tools": {
    "add":  {"subjects": ["eng"]},
    "echo": {"subjects": ["eng", "ops"], "subject_calls_per_minute": 3}
  }}}}`

type team struct {
	as     *testoauth.Server
	g      *gateway
	home   string
	url    string // https://127.0.0.1:PORT/sdk
	bundle string // PEM of the authorization server's and the gateway's certificates
	pool   *x509.CertPool
}

func startTeam(t *testing.T, policyFile string) *team {
	t.Helper()
	return startTeamWith(t, policyFile, nil)
}

// startTeamWith starts the team gateway; transport replaces the TLS flags
// when set.
func startTeamWith(t *testing.T, policyFile string, transport []string) *team {
	t.Helper()
	dir := t.TempDir()
	tm := &team{as: testoauth.New(), home: home(t)}
	t.Cleanup(tm.as.Close)
	tm.as.Register(testoauth.Client{ID: "alice-app", User: testoauth.User{Subject: "alice", Groups: []string{"eng"}, Scopes: []string{"mcp:tools"}}})
	tm.as.Register(testoauth.Client{ID: "bob-app", User: testoauth.User{Subject: "bob", Groups: []string{"ops"}, Scopes: []string{"mcp:tools"}}})

	certPEM, keyPEM := selfSigned(t)
	port := freePort(t)
	files := map[string][]byte{
		"cert.pem": certPEM, "key.pem": keyPEM, "idp.pem": tm.as.CAPEM(),
		"bundle.pem":  append(slices.Clone(certPEM), tm.as.CAPEM()...),
		"policy.json": []byte(policyFile),
		"defs.json":   nil,
	}
	for name, b := range files {
		if b != nil {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	baseDefs().write(t, filepath.Join(dir, "defs.json"))
	resource := fmt.Sprintf("https://127.0.0.1:%d", port)
	auth, _ := json.Marshal(map[string]any{"version": 1, "resource": resource, "scopes": []string{"mcp:tools"},
		"issuers": []any{map[string]any{"issuer": tm.as.Issuer}}, "ca_file": filepath.Join(dir, "idp.pem")})
	rf := filepath.Join(dir, "routes.json")
	if err := os.WriteFile(filepath.Join(dir, "auth.json"), auth, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rf, []byte(sdkRoute(filepath.Join(dir, "defs.json"))), 0o600); err != nil {
		t.Fatal(err)
	}
	if transport == nil {
		transport = []string{"--tls-cert", filepath.Join(dir, "cert.pem"), "--tls-key", filepath.Join(dir, "key.pem")}
	}
	args := []string{"gateway", "--routes", rf, "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--auth", filepath.Join(dir, "auth.json"), "--policy", filepath.Join(dir, "policy.json")}
	tm.g = launchGateway(t, tm.home, append(args, transport...))
	if tm.g.url != resource && tm.g.url != fmt.Sprintf("http://127.0.0.1:%d", port) {
		t.Fatalf("the gateway listens on %s", tm.g.url)
	}
	tm.url, tm.bundle = resource+"/sdk", filepath.Join(dir, "bundle.pem")
	tm.pool = x509.NewCertPool()
	tm.pool.AppendCertsFromPEM(files["bundle.pem"])
	return tm
}

// selfSigned is a TLS certificate for 127.0.0.1.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcpseal team gateway test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// oauthSummary is what oauth-client.mjs prints.
type oauthSummary struct {
	OK    bool     `json:"ok"`
	Stage string   `json:"stage"`
	Tools []string `json:"tools"`
	Calls []struct {
		IsError bool    `json:"isError"`
		Text    *string `json:"text"`
		Error   *struct {
			Code    *int            `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	} `json:"calls"`
	Error json.RawMessage `json:"error"`
}

// tsOAuth runs the TypeScript SDK client as clientID, calling tool n times.
func (tm *team) tsOAuth(t *testing.T, clientID, tool, args string, n int) oauthSummary {
	t.Helper()
	cmd := exec.Command("node", filepath.Join(nodeDir(), "oauth-client.mjs"), "--url", tm.url, "--client-id", clientID,
		"--call", tool, "--args", args, "--calls", fmt.Sprint(n))
	cmd.Dir = nodeDir()
	cmd.Env = environ(t, tm.home, "NODE_EXTRA_CA_CERTS="+tm.bundle)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, ok := waitExit(cmd, 60*time.Second); !ok {
		t.Fatalf("oauth-client.mjs did not finish within 60s\nstderr:\n%s", errb.String())
	}
	var s oauthSummary
	if err := json.Unmarshal([]byte(strings.TrimSpace(out.String())), &s); err != nil {
		t.Fatalf("oauth-client.mjs printed %q: %v\nstderr:\n%s", out.String(), err, errb.String())
	}
	if !s.OK {
		t.Fatalf("oauth-client.mjs failed at %s: %s\nstderr:\n%s\ngateway:\n%s", s.Stage, s.Error, errb.String(), tm.g.stderr.String())
	}
	return s
}

// TestTeamGatewayTwoGroupsWithTheTypeScriptClient: alice (eng) and bob
// (ops) log in with the TypeScript SDK's OAuth flow over TLS; alice sees
// and calls add, bob neither sees it nor can call it.
func TestTeamGatewayTwoGroupsWithTheTypeScriptClient(t *testing.T) {
	t.Parallel()
	needNode(t)
	tm := startTeam(t, teamPolicy)
	alice := tm.tsOAuth(t, "alice-app", "add", `{"a":1,"b":2}`, 1)
	if !slices.Equal(alice.Tools, []string{"add", "echo"}) || alice.Calls[0].Error != nil || alice.Calls[0].IsError {
		t.Fatalf("alice: tools %v, call %+v", alice.Tools, alice.Calls[0])
	}
	bob := tm.tsOAuth(t, "bob-app", "add", `{"a":1,"b":2}`, 1)
	if !slices.Equal(bob.Tools, []string{"echo"}) {
		t.Fatalf("bob sees %v", bob.Tools)
	}
	if e := bob.Calls[0].Error; e == nil || e.Code == nil || *e.Code != codeUnknownTool {
		t.Fatalf("bob's call of add: %+v", bob.Calls[0])
	}
	// The refusal never reached the gate; the front door audits it.
	tm.waitAudited(t, "bob", func(e auditRow) bool {
		return e.Op == "call" && e.Outcome == "refused" && e.Tool == "add" && e.Code == "unknown-tool"
	})
}

// auditRow is what these tests read of an audit event.
type auditRow struct{ Op, Outcome, Tool, Code, Subject, Client, JTI string }

// waitAudited waits until `mcpseal audit tail --subject` shows an event
// want accepts (the log is written in batches), and checks that it shows
// no other caller's.
func (tm *team) waitAudited(t *testing.T, subject string, want func(auditRow) bool) {
	t.Helper()
	tm.waitCounted(t, subject, 1, want)
}

// auditTail is what `mcpseal audit tail --subject` shows of the last 200
// events; it fails the test when it shows another caller's.
func (tm *team) auditTail(t *testing.T, subject string) []auditRow {
	t.Helper()
	var tail struct{ Events []auditRow }
	out, stderr, code := mcpseal(t, tm.home, "audit", "tail", "--json", "--subject", subject, "-n", "200")
	if code != 0 {
		t.Fatalf("audit tail: exit %d: %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(out), &tail); err != nil {
		t.Fatal(err)
	}
	for _, e := range tail.Events {
		if e.Subject != subject {
			t.Fatalf("audit tail --subject %s shows %+v", subject, e)
		}
	}
	return tail.Events
}

// TestTeamGatewayRateLimitAcrossReconnects: bob's echo budget (3 a minute)
// is his across two separate client runs.
func TestTeamGatewayRateLimitAcrossReconnects(t *testing.T) {
	t.Parallel()
	needNode(t)
	tm := startTeam(t, teamPolicy)
	first := tm.tsOAuth(t, "bob-app", "echo", `{"text":"hi"}`, 2)
	second := tm.tsOAuth(t, "bob-app", "echo", `{"text":"hi"}`, 2)
	calls := append(first.Calls, second.Calls...)
	for i, c := range calls[:3] {
		if c.Error != nil || c.IsError {
			t.Fatalf("call %d refused: %+v", i, c)
		}
	}
	if e := calls[3].Error; e == nil || !strings.Contains(string(e.Data), "rate-limited") {
		t.Fatalf("the fourth call in a minute: %+v", calls[3])
	}
}

// goClient connects the go-sdk client, with its own OAuth support, as
// clientID over TLS; opts may set an elicitation handler.
func (tm *team) goClient(t *testing.T, clientID, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tm.pool, MinVersion: tls.VersionTLS12}}}
	h, err := tm.as.CodeHandler(clientID, hc)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "go-client", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: tm.url, HTTPClient: hc, OAuthHandler: h, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("%q: %v\n%s", version, err, tm.g.stderr.String())
	}
	return cs
}

// TestTeamGatewayConfirmsPerCaller: ops's calls of echo need a person's
// yes, eng's do not. A legacy session asks its caller through the
// client's elicitation; a 2026-07-28 request cannot be asked for one
// caller of the shared session and is refused.
func TestTeamGatewayConfirmsPerCaller(t *testing.T) {
	t.Parallel()
	tm := startTeam(t, `{"version": 1,
	  "subjects": {"eng": {"groups": ["eng"]}, "ops": {"groups": ["ops"]}},
	  "servers": {"sdk": {"tools": {"echo": {"confirm_subjects": ["ops"]}}}}}`)
	asked := 0
	opts := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked++
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
	}}
	echo := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
	bob := tm.goClient(t, "bob-app", "2025-11-25", opts)
	if _, err := bob.CallTool(context.Background(), echo); err != nil || asked != 1 {
		t.Fatalf("bob's legacy call: %v, asked %d times", err, asked)
	}
	bob.Close()
	alice := tm.goClient(t, "alice-app", "2025-11-25", opts)
	if _, err := alice.CallTool(context.Background(), echo); err != nil || asked != 1 {
		t.Fatalf("alice's call: %v, asked %d times in all", err, asked)
	}
	alice.Close()
	modern := tm.goClient(t, "bob-app", "", opts)
	defer modern.Close()
	if _, err := modern.CallTool(context.Background(), echo); err == nil || !strings.Contains(err.Error(), "confirm-unavailable") {
		t.Fatalf("bob's 2026-07-28 call: %v", err)
	}
}

// TestTeamGatewayGoClientIsAudited: the go-sdk client's own OAuth support
// over TLS; the audit log names the caller, and audit tail --subject
// finds its events and no one else's.
func TestTeamGatewayGoClientIsAudited(t *testing.T) {
	t.Parallel()
	tm := startTeam(t, teamPolicy)
	for _, version := range []string{"2025-11-25", ""} {
		cs := tm.goClient(t, "alice-app", version, nil)
		if names, err := toolNames(t, cs); err != nil || !slices.Equal(names, []string{"add", "echo"}) {
			t.Fatalf("%q: alice sees %v (%v)", version, names, err)
		}
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}); err != nil {
			t.Fatal(err)
		}
		cs.Close()
	}
	// The legacy session's gate and the 2026-07-28 session's gate, which
	// every caller shares, both name alice in their own events: two
	// allowed calls of add, and no front-door event for either.
	tm.waitAudited(t, "alice", func(e auditRow) bool {
		return e.Op == "call" && e.Tool == "add" && e.Outcome == "allowed" && e.Client == "alice-app" && len(e.JTI) == 64
	})
	tm.waitCounted(t, "alice", 2, func(e auditRow) bool {
		return e.Op == "call" && e.Tool == "add" && e.Outcome == "allowed" && e.Client == "alice-app" && len(e.JTI) == 64
	})
	out, _, _ := mcpseal(t, tm.home, "audit", "tail", "--json", "--subject", "bob")
	if strings.Contains(out, `"subject":"alice"`) {
		t.Fatalf("audit tail --subject bob shows alice's events: %s", out)
	}
}

// TestSharedSessionGateEventsWithoutTheirCaller: alice and bob call tools
// in the one 2026-07-28 session of a route; every event the gate writes
// for bob's requests (his listing, his call, its result) must name bob,
// so that audit tail --subject bob finds them, and none of alice's.
func TestSharedSessionGateEventsWithoutTheirCaller(t *testing.T) {
	t.Parallel()
	tm := startTeam(t, teamPolicy)
	alice := tm.goClient(t, "alice-app", "", nil)
	defer alice.Close()
	bob := tm.goClient(t, "bob-app", "", nil)
	defer bob.Close()
	if _, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := toolNames(t, bob); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []func(auditRow) bool{
		func(e auditRow) bool {
			return e.Op == "call" && e.Tool == "echo" && e.Outcome == "allowed" && e.Client == "bob-app"
		},
		func(e auditRow) bool { return e.Op == "list" && e.Client == "bob-app" },
	} {
		tm.waitAudited(t, "bob", want)
	}
	tm.waitAudited(t, "alice", func(e auditRow) bool { return e.Op == "call" && e.Tool == "add" && e.Client == "alice-app" })
	out, _, _ := mcpseal(t, tm.home, "audit", "tail", "--json", "--subject", "bob", "-n", "200")
	if strings.Contains(out, `"tool":"add"`) {
		t.Fatalf("audit tail --subject bob shows alice's call: %s", out)
	}
}

// waitCounted waits until audit tail --subject shows at least n events
// want accepts (the log is written in batches).
func (tm *team) waitCounted(t *testing.T, subject string, n int, want func(auditRow) bool) {
	t.Helper()
	var events []auditRow
	got := 0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		events, got = tm.auditTail(t, subject), 0
		for _, e := range events {
			if want(e) {
				got++
			}
		}
		if got >= n {
			return
		}
	}
	t.Fatalf("%d such audit events of %s, want %d: %+v", got, subject, n, events)
}

// TestTeamGatewayBehindProxyWarnsAndTrustsOnlyTheProxy: plain HTTP behind
// a TLS-terminating proxy is said loudly at start, and a connection from
// anywhere but the trusted proxy is refused before its token is read.
func TestTeamGatewayBehindProxyWarnsAndTrustsOnlyTheProxy(t *testing.T) {
	t.Parallel()
	tm := startTeamWith(t, teamPolicy, []string{"--insecure-behind-proxy", "--trusted-proxy", "10.0.0.0/8"})
	if !strings.Contains(tm.g.stderr.String(), "WARNING: --insecure-behind-proxy") {
		t.Fatalf("no warning on stderr:\n%s", tm.g.stderr.String())
	}
	u := testoauth.User{Subject: "alice", Groups: []string{"eng"}, Scopes: []string{"mcp:tools"}}
	req, _ := http.NewRequest(http.MethodPost, tm.g.url+"/sdk", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+tm.as.Mint(tm.as.Claims(u, "alice-app", tm.url)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a request from outside the trusted proxy got %d", resp.StatusCode)
	}
}
