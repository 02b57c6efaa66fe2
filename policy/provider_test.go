package policy

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// commandSession returns a session with server "s" whose before_tool_call
// and before_connect stages ask the test binary in mode as a command
// provider; out captures what the provider saw.
func commandSession(t *testing.T, mode, extra string) (*Session, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "seen")
	p := mustParse(t, fmt.Sprintf(`{"version": 1,
	  "defaults": {"local": "providers" %s},
	  "servers": {"s": {"providers": ["cmd"]}},
	  "providers": {"cmd": {"kind": "command", "command": [%s], "env": [%q, %q], "timeout": %q}}}`,
		extra, mustJSON(t, exe), providerModeEnv, providerOutEnv, commandTimeout(mode)))
	env := map[string]string{providerModeEnv: mode, providerOutEnv: out, "SECRET_HOST_VAR": "SECRET-MARKER-ENV"}
	c := NewChecker(p, Options{Getenv: func(k string) string { return env[k] }})
	return c.Session(stdioServer("s")), out
}

// commandTimeout gives the test provider room to start (a -race test
// binary on a busy machine takes a while), except where the test is about
// the timeout.
func commandTimeout(mode string) string {
	if strings.HasPrefix(mode, "hang") {
		return "1s"
	}
	return "30s"
}

var readOnlyTool = `{"name":"lookup","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`

func TestCommandProviderDecisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode, extra string
		reason      string // refusal reason, "" when it proceeds
		decision    Decision
	}{
		{"allow", "", "", Allow},
		{"block", "", ReasonProviderBlock, Block},
		{"unsupported", "", ReasonProviderUnsupported, Block},
		{"warn", "", ReasonWarnNotAllowed, Block},
		{"warn", `, "allow_warn": true`, "", Warn},
		{"confirm", "", "", RequireConfirmation},
		{"garbage", "", ReasonProviderFailed, Block},
		{"prose", "", ReasonProviderFailed, Block},
		{"extra", "", ReasonProviderFailed, Block},
		{"exit1", "", ReasonProviderFailed, Block},
		{"flood", "", ReasonProviderFailed, Block},
		{"no-such-mode", "", ReasonProviderFailed, Block},
	}
	for _, tt := range tests {
		t.Run(tt.mode+tt.extra, func(t *testing.T) {
			t.Parallel()
			ss, _ := commandSession(t, tt.mode, tt.extra)
			v := ss.BeforeToolCall(context.Background(), toolRaw(t, readOnlyTool))
			got := ""
			if v.Refusal != nil {
				got = v.Refusal.Reason
				if v.Refusal.Kind != KindPreflight || v.Refusal.Stage != StageBeforeToolCall || v.Refusal.Provider != "cmd" || v.Refusal.Tool != "lookup" {
					t.Errorf("refusal %+v", v.Refusal)
				}
			}
			if got != tt.reason || v.Decision != tt.decision {
				t.Errorf("got %s/%q, want %s/%q (%+v)", v.Decision, got, tt.decision, tt.reason, v)
			}
		})
	}
}

// TestHangingCommandProviderIsKilled: a provider that never answers, and
// one whose grandchild holds its stdout open, are refused within the
// timeout (plus the pipe grace period), and the call does not proceed.
func TestHangingCommandProviderIsKilled(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"hang", "hang-grandchild"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ss, _ := commandSession(t, mode, "")
			start := time.Now()
			v := ss.BeforeToolCall(context.Background(), toolRaw(t, readOnlyTool))
			if el := time.Since(start); el > time.Second+commandWaitDelay+2*time.Second {
				t.Errorf("took %v", el)
			}
			if v.Refusal == nil || v.Refusal.Reason != ReasonProviderFailed {
				t.Errorf("verdict %+v, want provider-failed", v)
			}
		})
	}
}

// TestCommandProviderSeesNoArgumentsAndOnlyNamedEnv: the provider gets
// the hook's input (tool name, digest, annotations, the local argv) and
// only the environment variables the policy names.
func TestCommandProviderSeesNoArgumentsAndOnlyNamedEnv(t *testing.T) {
	t.Parallel()
	ss, out := commandSession(t, "allow-once", "")
	def := toolRaw(t, readOnlyTool)
	if r := ss.CheckCall(def, callParams("lookup", `{"q":"SECRET-MARKER-ARGUMENT"}`)); r != nil {
		t.Fatal(r)
	}
	if v := ss.BeforeToolCall(context.Background(), def); !v.Proceeds() {
		t.Fatalf("%+v", v)
	}
	seen, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	req, envText, _ := strings.Cut(string(seen), "\n--env--\n")
	if strings.Contains(string(seen), "SECRET-MARKER-ARGUMENT") || strings.Contains(envText, "SECRET-MARKER-ENV") {
		t.Errorf("the provider saw arguments or an unnamed variable:\n%s", seen)
	}
	var r Request
	if err := json.Unmarshal([]byte(req), &r); err != nil {
		t.Fatalf("request %q: %v", req, err)
	}
	if r.Type != RequestType || r.Stage != StageBeforeToolCall || r.Subject.Tool == nil || r.Subject.Tool.Name != "lookup" ||
		r.Subject.Tool.Digest != def.Digest || string(r.Subject.Tool.Annotations) != `{"readOnlyHint":true}` || len(r.Subject.Server.Command) != 2 {
		t.Errorf("request %+v", r)
	}
	for _, kv := range strings.Split(strings.TrimSuffix(envText, "\n--end--\n"), "\n") {
		if name, _, _ := strings.Cut(kv, "="); name != providerModeEnv && name != providerOutEnv {
			t.Errorf("the provider got variable %s", name)
		}
	}
}

// TestProviderToldOfDrift: under a drift the gate forwards, the provider
// gets the server's current digest and annotations and, in "drift", the
// pinned ones (or "pinned": false for a new tool); without drift there is
// no "drift" member. A cached decision without drift is not reused for the
// same definition under drift.
func TestProviderToldOfDrift(t *testing.T) {
	t.Parallel()
	ss, out := commandSession(t, "allow", "")
	def := toolRaw(t, readOnlyTool)
	pinned := toolRaw(t, `{"name":"lookup","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`)
	subject := func() map[string]json.RawMessage {
		t.Helper()
		seen, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		// The provider appends each request it gets: read the last.
		reqs := strings.Split(strings.TrimSuffix(string(seen), "\n--end--\n"), "\n--end--\n")
		req, _, _ := strings.Cut(reqs[len(reqs)-1], "\n--env--\n")
		var r struct {
			Subject struct {
				Tool map[string]json.RawMessage `json:"tool"`
			} `json:"subject"`
		}
		if err := json.Unmarshal([]byte(req), &r); err != nil {
			t.Fatalf("request %q: %v", req, err)
		}
		return r.Subject.Tool
	}
	if v := ss.BeforeToolCall(context.Background(), def); !v.Proceeds() {
		t.Fatalf("%+v", v)
	}
	if tool := subject(); tool["drift"] != nil {
		t.Errorf("no drift, yet the provider was told of one: %s", tool["drift"])
	}
	if _, ok := ss.QuickBeforeDriftedToolCall(def, &pinned); ok {
		t.Error("the decision cached without drift was reused under drift")
	}
	ss.BeforeDriftedToolCall(context.Background(), def, &pinned)
	tool := subject()
	want := `{"pinned":true,"digest":"` + pinned.Digest + `","annotations":{"destructiveHint":true}}`
	if string(tool["drift"]) != want || string(tool["annotations"]) != `{"readOnlyHint":true}` || string(tool["digest"]) != `"`+def.Digest+`"` {
		t.Errorf("under drift the provider got %v; want drift %s", tool, want)
	}
	ss.BeforeDriftedToolCall(context.Background(), def, nil)
	if tool := subject(); string(tool["drift"]) != `{"pinned":false}` {
		t.Errorf("a new tool under drift: drift %s, want {\"pinned\":false}", tool["drift"])
	}
}

// TestDecisionCachedUntilExpiry: a decision with a ttl is reused by the
// session until it expires, then asked again; one without is never reused.
func TestDecisionCachedUntilExpiry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode string
		want int
	}{{"allow", 2}, {"allow-once", 3}} {
		ss, out := commandSession(t, tc.mode, "")
		now := time.Now()
		ss.c.now = func() time.Time { return now }
		def := toolRaw(t, readOnlyTool)
		ss.BeforeToolCall(context.Background(), def)
		if _, ok := ss.QuickBeforeToolCall(def); ok != (tc.mode == "allow") {
			t.Errorf("%s: quick path ok=%v", tc.mode, ok)
		}
		ss.BeforeToolCall(context.Background(), def)
		now = now.Add(61 * time.Second)
		ss.BeforeToolCall(context.Background(), def)
		seen, _ := os.ReadFile(out)
		if n := strings.Count(string(seen), "--end--"); n != tc.want {
			t.Errorf("%s: the provider ran %d times, want %d", tc.mode, n, tc.want)
		}
	}
}

// TestBuiltinRefusalAsksNoProvider: a tool the policy denies is refused
// without asking (or paying) an external provider.
func TestBuiltinRefusalAsksNoProvider(t *testing.T) {
	t.Parallel()
	ss, out := commandSession(t, "allow", `, "deny": ["lookup"]`)
	v := ss.BeforeToolCall(context.Background(), toolRaw(t, readOnlyTool))
	if v.Refusal == nil || v.Refusal.Reason != ReasonDenied {
		t.Fatalf("%+v", v)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the provider was asked")
	}
}

// receiptServer is an http provider answering with receipts built by
// mutate from the correct one.
type receiptServer struct {
	timeout string // the provider's timeout; default 30s
	srv     *httptest.Server
	key     ed25519.PrivateKey
	hits    atomic.Int64
	auth    atomic.Value
	bodys   atomic.Value
}

func newReceiptServer(t *testing.T, mutate func(r *Receipt) (ed25519.PrivateKey, bool)) *receiptServer {
	t.Helper()
	rs := &receiptServer{key: testKey("http")}
	rs.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rs.hits.Add(1)
		rs.auth.Store(req.Header.Get("Authorization"))
		body, _ := io.ReadAll(req.Body)
		rs.bodys.Store(string(body))
		var q Request
		if err := json.Unmarshal(body, &q); err != nil {
			http.Error(w, "bad", 400)
			return
		}
		sub, err := SubjectDigest(body)
		if err != nil {
			http.Error(w, "bad", 400)
			return
		}
		now := time.Now().UTC()
		r := Receipt{V: 1, Type: ReceiptType, Decision: Allow, Stage: q.Stage, Subject: sub, Nonce: q.Nonce,
			IssuedAt: now.Add(-time.Second).Format(time.RFC3339), ExpiresAt: now.Add(time.Hour).Format(time.RFC3339), KID: "k1"}
		key := rs.key
		if mutate != nil {
			k, ok := mutate(&r)
			if !ok {
				return // the mutation answered itself
			}
			if k != nil {
				key = k
			}
		}
		env, err := SignReceipt(r, key)
		if err != nil {
			http.Error(w, "bad", 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(env)
	}))
	t.Cleanup(rs.srv.Close)
	return rs
}

func (rs *receiptServer) session(t *testing.T, extra string, env map[string]string) *Session {
	t.Helper()
	p := mustParse(t, fmt.Sprintf(`{"version": 1,
	  "servers": {"remote": {"providers": ["corp"]}},
	  "providers": {"corp": {"kind": "http", "url": %q, "keys": {"k1": %q}, "timeout": %q %s}}}`,
		rs.srv.URL+"/decide", pubString(rs.key), cmp.Or(rs.timeout, "30s"), extra))
	c := NewChecker(p, Options{HTTPClient: rs.srv.Client(), Getenv: func(k string) string { return env[k] }})
	return c.Session(Server{ID: nameID("remote"), Label: "remote", Transport: HTTP, URL: "https://mcp.example.com/mcp/SECRET-MARKER-PATH?token=SECRET-MARKER-QUERY"})
}

func TestHTTPProviderReceipts(t *testing.T) {
	t.Parallel()
	rogue := testKey("rogue")
	tests := []struct {
		name   string
		mutate func(r *Receipt) (ed25519.PrivateKey, bool)
		reason string
	}{
		{"valid", nil, ""},
		{"forged", func(r *Receipt) (ed25519.PrivateKey, bool) { return rogue, true }, ReasonReceiptForged},
		{"wrong-key", func(r *Receipt) (ed25519.PrivateKey, bool) { r.KID = "k2"; return nil, true }, ReasonReceiptUnknownKey},
		{"expired", func(r *Receipt) (ed25519.PrivateKey, bool) {
			r.IssuedAt, r.ExpiresAt = "2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z"
			return nil, true
		}, ReasonReceiptExpired},
		{"other-subject", func(r *Receipt) (ed25519.PrivateKey, bool) { r.Subject = sha256Hex(nil); return nil, true }, ReasonReceiptMismatch},
		{"replayed", func(r *Receipt) (ed25519.PrivateKey, bool) { r.Nonce = "00"; return nil, true }, ReasonReceiptMismatch},
		{"block", func(r *Receipt) (ed25519.PrivateKey, bool) {
			r.Decision, r.Reason = Block, "unknown-host"
			return nil, true
		}, ReasonProviderBlock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rs := newReceiptServer(t, tt.mutate)
			v := rs.session(t, "", nil).BeforeConnect(context.Background())
			got := ""
			if v.Refusal != nil {
				got = v.Refusal.Reason
			}
			if got != tt.reason {
				t.Fatalf("got %q (%+v), want %q", got, v, tt.reason)
			}
			if tt.reason == "" || tt.reason == ReasonProviderBlock {
				if v.Receipt == nil || v.Receipt.Kind != ReceiptType || len(v.Receipt.SHA256) != 64 || v.Receipt.Signature.KID != "k1" {
					t.Errorf("receipt ref %+v", v.Receipt)
				}
			}
			if tt.reason == ReasonProviderBlock && !strings.Contains(v.Refusal.Why, "unknown-host") {
				t.Errorf("why %q lacks the provider's reason code", v.Refusal.Why)
			}
		})
	}
}

// TestHTTPProviderSeesNoTokens: an http provider, across the network, gets
// the endpoint's origin and digests, never its path, query or the argv.
func TestHTTPProviderSeesNoTokens(t *testing.T) {
	t.Parallel()
	rs := newReceiptServer(t, nil)
	if v := rs.session(t, "", nil).BeforeConnect(context.Background()); !v.Proceeds() {
		t.Fatalf("%+v", v)
	}
	body := rs.bodys.Load().(string)
	if strings.Contains(body, "SECRET-MARKER") {
		t.Errorf("the provider saw a token: %s", body)
	}
	if !strings.Contains(body, `"origin":"https://mcp.example.com"`) || !strings.Contains(body, `"host":"mcp.example.com"`) {
		t.Errorf("the provider did not get the origin: %s", body)
	}
}

func TestHTTPProviderFailuresRefuse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler func(stop chan struct{}) http.HandlerFunc
	}{
		{"status-500", func(chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "oops", 500) }
		}},
		{"redirect", func(chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://169.254.169.254/", http.StatusFound)
			}
		}},
		{"garbage", func(chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"decision":"allow"}`) }
		}},
		{"too-large", func(chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat(" ", maxReceiptBytes+10))) }
		}},
		{"hang", func(stop chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-stop:
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stop := make(chan struct{})
			srv := httptest.NewTLSServer(tt.handler(stop))
			t.Cleanup(srv.Close)
			t.Cleanup(func() { close(stop) }) // runs first: the handler returns, then Close
			rs := &receiptServer{srv: srv, key: testKey("http"), timeout: "1s"}
			start := time.Now()
			v := rs.session(t, "", nil).BeforeConnect(context.Background())
			if v.Refusal == nil || !strings.HasPrefix(v.Refusal.Reason, "provider-failed") && !strings.HasPrefix(v.Refusal.Reason, "receipt-") {
				t.Errorf("%+v, want a refusal", v)
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
}

func TestHTTPProviderBearerToken(t *testing.T) {
	t.Parallel()
	rs := newReceiptServer(t, nil)
	if v := rs.session(t, `, "bearer_env": "CORP_TOKEN"`, map[string]string{"CORP_TOKEN": "tok-123"}).BeforeConnect(context.Background()); !v.Proceeds() {
		t.Fatalf("%+v", v)
	}
	if got := rs.auth.Load().(string); got != "Bearer tok-123" {
		t.Errorf("Authorization = %q", got)
	}
	before := rs.hits.Load()
	v := rs.session(t, `, "bearer_env": "CORP_TOKEN"`, nil).BeforeConnect(context.Background())
	if v.Refusal == nil || v.Refusal.Reason != ReasonProviderFailed || rs.hits.Load() != before {
		t.Errorf("an unset bearer_env: %+v, hits %d -> %d", v, before, rs.hits.Load())
	}
}

// TestProviderIgnoresTheEnvironmentsProxy: an http provider's requests do
// not go through the proxy HTTPS_PROXY or HTTP_PROXY names (known gap 15):
// its transport has no Proxy function, unless the host gave its own.
func TestProviderIgnoresTheEnvironmentsProxy(t *testing.T) {
	t.Parallel()
	c := providerClient(nil, time.Second)
	tr, ok := c.Transport.(*http.Transport)
	if !ok || tr.Proxy != nil {
		t.Fatalf("provider transport %T, proxy set %v", c.Transport, ok && tr.Proxy != nil)
	}
	own := &http.Client{Transport: http.DefaultTransport}
	if providerClient(own, time.Second).Transport != http.DefaultTransport {
		t.Error("the host's own transport was replaced")
	}
}
