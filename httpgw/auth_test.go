package httpgw

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/internal/testoauth"
	"github.com/mcpseal/mcpseal/oauth"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/policy"
)

// teamWorld is a team gateway on TLS in front of a go-sdk upstream, with
// a test authorization server. alice (group eng) may see and call both of
// the upstream's tools; bob (group ops) only echo.
type teamWorld struct {
	as   *testoauth.Server
	up   *upstream
	gw   *Gateway
	srv  *httptest.Server
	url  string // https://127.0.0.1:PORT
	pool *x509.CertPool
	// lastToken is the access token of the last connectAs.
	lastToken string
}

// teamPolicy is a small IdentityPolicy for these tests: group eng sees
// every tool, everyone else only echo, each caller may call echo perMinute
// times. The policy file's own rules are tested in package policy and
// end to end.
type teamPolicy struct {
	rates     *policy.SubjectRates
	perMinute int64
}

func (p *teamPolicy) Visible(route string, who *oauth.Identity, tool string) bool {
	return tool == "echo" || slices.Contains(who.Groups, "eng")
}

func (p *teamPolicy) Call(route string, who *oauth.Identity, tool string) string {
	if !p.rates.Allow(route+"\x00"+who.Key()+"\x00"+tool, p.perMinute) {
		return policy.ReasonRateLimited
	}
	return ""
}

func newTeamWorld(t *testing.T, tweak ...func(*Config)) *teamWorld {
	t.Helper()
	return newTeamWorldAuth(t, "", tweak...)
}

// newTeamWorldAuth is newTeamWorld with issuer (JSON members, each
// starting with a comma) added to auth.json's one issuer.
func newTeamWorldAuth(t *testing.T, issuer string, tweak ...func(*Config)) *teamWorld {
	t.Helper()
	w := &teamWorld{as: testoauth.New(), up: newUpstream(t, false)}
	t.Cleanup(w.as.Close)
	w.as.Register(testoauth.Client{ID: "alice-app", User: testoauth.User{Subject: "alice", Groups: []string{"eng"}, Scopes: []string{"mcp:tools"}}})
	w.as.Register(testoauth.Client{ID: "bob-app", User: testoauth.User{Subject: "bob", Groups: []string{"ops"}, Scopes: []string{"mcp:tools"}}})
	w.as.Register(testoauth.Client{ID: "ci", Secret: "ci-secret", User: testoauth.User{Subject: "ci-bot", Scopes: []string{"mcp:tools"}}})
	var h http.Handler
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { h.ServeHTTP(rw, r) }))
	w.srv.StartTLS()
	t.Cleanup(w.srv.Close)
	w.url = w.srv.URL
	w.pool = x509.NewCertPool()
	w.pool.AddCert(w.srv.Certificate())
	w.pool.AddCert(w.as.Certificate())
	cfg, err := oauth.ParseConfig("auth.json", fmt.Appendf(nil, `{"version": 1, "resource": %q, "scopes": ["mcp:tools"], "issuers": [{"issuer": %q%s}]}`, w.url, w.as.Issuer, issuer))
	if err != nil {
		t.Fatal(err)
	}
	v, err := oauth.NewVerifier(context.Background(), cfg, oauth.Options{Client: w.as.Client(), Getenv: func(string) string { return testoauth.IntrospectSecret }})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ParseRoutes([]byte(w.up.urlRoute("")))
	if err != nil {
		t.Fatal(err)
	}
	store, err := pin.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	up := x509.NewCertPool()
	up.AddCert(w.up.srv.Certificate())
	gc := Config{Routes: rs, Pins: store, Auth: v, Identities: &teamPolicy{rates: policy.NewSubjectRates(nil), perMinute: 3},
		Resolver: fakeResolver(netip.MustParseAddr("127.0.0.1")), RootCAs: up}
	for _, f := range tweak {
		f(&gc)
	}
	w.gw, err = New(gc)
	if err != nil {
		t.Fatal(err)
	}
	h = w.gw
	u, _ := url.Parse(w.url)
	port := u.Port()
	var p int
	fmt.Sscan(port, &p)
	w.gw.SetPort(p)
	t.Cleanup(w.gw.Close)
	return w
}

func (w *teamWorld) httpClient() *http.Client {
	tr := w.srv.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.RootCAs = w.pool
	return &http.Client{Transport: tr}
}

// token gets an access token for the docs route by authorization code
// with PKCE, as client.
func (w *teamWorld) token(t *testing.T, client string) string {
	t.Helper()
	cs, err := w.connectAs(client, "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	cs.Close()
	return w.lastToken
}

// connectAs connects the go-sdk client with its own OAuth support
// (authorization code + PKCE against the test server, pre-registered
// client) to the docs route.
func (w *teamWorld) connectAs(client, version string, h *auth.AuthorizationCodeHandler) (*mcp.ClientSession, error) {
	hc := w.httpClient()
	if h == nil {
		var err error
		if h, err = w.as.CodeHandler(client, hc); err != nil {
			return nil, err
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: w.url + "/docs", HTTPClient: hc, OAuthHandler: h, MaxRetries: -1}
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		if ts, err := h.TokenSource(ctx); err == nil && ts != nil {
			if tok, err := ts.Token(); err == nil {
				w.lastToken = tok.AccessToken
			}
		}
	}
	return cs, err
}

func (w *teamWorld) post(t *testing.T, token, sid, body string) (*http.Response, []byte) {
	t.Helper()
	r, _ := http.NewRequest(http.MethodPost, w.url+"/docs", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if sid != "" {
		r.Header.Set(sessionHeader, sid)
	}
	resp, err := w.httpClient().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

func TestUnauthenticatedRequestGetsTheResourceMetadata(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	resp, body := w.post(t, "", "", initBody)
	wantRefused(t, resp, body, http.StatusUnauthorized, CodeForbidden, ReasonAuth)
	want := `Bearer resource_metadata="` + w.url + `/.well-known/oauth-protected-resource/docs", scope="mcp:tools"`
	if got := resp.Header.Get("WWW-Authenticate"); got != want {
		t.Fatalf("WWW-Authenticate %q, want %q", got, want)
	}
	mr, err := w.httpClient().Get(w.url + "/.well-known/oauth-protected-resource/docs")
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Body.Close()
	var m oauth.ResourceMetadata
	if err := json.NewDecoder(mr.Body).Decode(&m); err != nil || m.Resource != w.url+"/docs" || len(m.AuthorizationServers) != 1 || m.AuthorizationServers[0] != w.as.Issuer {
		t.Fatalf("metadata %+v (%v)", m, err)
	}
	if r, _ := w.httpClient().Get(w.url + "/.well-known/oauth-protected-resource/nosuch"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("metadata of an unknown route: %d", r.StatusCode)
	}
}

func TestTokenForAnotherResourceIsRefusedAtTheDoor(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	u := testoauth.User{Subject: "alice", Scopes: []string{"mcp:tools"}}
	resp, body := w.post(t, w.as.Mint(w.as.Claims(u, "alice-app", "https://other.example/mcp")), "", initBody)
	wantRefused(t, resp, body, http.StatusUnauthorized, CodeForbidden, ReasonAuth)
	if !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("WWW-Authenticate %q", resp.Header.Get("WWW-Authenticate"))
	}
}

func TestTokenWithoutTheRequiredScopeIsForbidden(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	u := testoauth.User{Subject: "alice", Scopes: []string{"profile"}}
	resp, body := w.post(t, w.as.Mint(w.as.Claims(u, "alice-app", w.url+"/docs")), "", initBody)
	wantRefused(t, resp, body, http.StatusForbidden, CodeForbidden, ReasonScope)
	if h := resp.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="insufficient_scope"`) || !strings.Contains(h, `scope="mcp:tools"`) {
		t.Fatalf("WWW-Authenticate %q", h)
	}
}

func TestTwoUsersSeeAndCallDifferentTools(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	for _, version := range []string{"2025-11-25", ""} {
		alice, err := w.connectAs("alice-app", version, nil)
		if err != nil {
			t.Fatal(err)
		}
		bob, err := w.connectAs("bob-app", version, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tools(t, alice); err != nil || !slices.Equal(got, []string{"echo", "mutate"}) {
			t.Fatalf("%q alice sees %v (%v)", version, got, err)
		}
		if got, err := tools(t, bob); err != nil || !slices.Equal(got, []string{"echo"}) {
			t.Fatalf("%q bob sees %v (%v)", version, got, err)
		}
		if _, err := bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "mutate", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "is not in the verified contract") {
			t.Fatalf("%q bob called mutate: %v", version, err)
		}
		if _, err := bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
			t.Fatalf("%q bob's echo: %v", version, err)
		}
		alice.Close()
		bob.Close()
	}
	w.up.mu.Lock()
	defer w.up.mu.Unlock()
	if w.up.mutated {
		t.Fatal("bob's call of mutate reached the server")
	}
}

func TestAccessTokenIsNeverPassedUpstream(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	cs, err := w.connectAs("alice-app", "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	w.up.mu.Lock()
	defer w.up.mu.Unlock()
	if len(w.up.authSeen) == 0 {
		t.Fatal("the upstream saw no request")
	}
	for _, a := range w.up.authSeen {
		if a != "" {
			t.Fatalf("the upstream was sent Authorization %q", a)
		}
	}
}

func TestSessionHijackByAnotherIdentity(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	alice, bob := w.token(t, "alice-app"), w.token(t, "bob-app")
	resp, _ := w.post(t, alice, "", initBody)
	sid := resp.Header.Get(sessionHeader)
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("alice's initialize: %d", resp.StatusCode)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	resp, body := w.post(t, bob, sid, list)
	wantRefused(t, resp, body, http.StatusNotFound, CodeForbidden, ReasonSession)
	if resp, _ := w.post(t, alice, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("alice's own session: %d", resp.StatusCode)
	}
}

func TestRateLimitPerIdentitySurvivesReconnects(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	calls := 0
	var last error
	for range 2 { // two sessions: the count is the caller's, not the session's
		cs, err := w.connectAs("bob-app", "2025-11-25", nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, last = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); last == nil {
				calls++
			}
		}
		cs.Close()
	}
	if calls != 3 || last == nil || !strings.Contains(last.Error(), policy.ReasonRateLimited) {
		t.Fatalf("%d calls passed, last error %v; want 3 and a rate limit", calls, last)
	}
	// alice's budget is her own.
	cs, err := w.connectAs("alice-app", "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatalf("alice is limited by bob's calls: %v", err)
	}
}

func TestRequestAroundTheTrustedProxyIsRefused(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t, func(c *Config) { c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} })
	// A peer that is not the proxy never reaches the token check, and
	// learns nothing, not even the metadata.
	u := testoauth.User{Subject: "alice", Scopes: []string{"mcp:tools"}}
	resp, body := w.post(t, w.as.Mint(w.as.Claims(u, "alice-app", w.url+"/docs")), "", initBody)
	wantRefused(t, resp, body, http.StatusForbidden, CodeForbidden, ReasonProxy)
}

func TestForeignHostIsRefusedOnTheTeamGateway(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	r, _ := http.NewRequest(http.MethodGet, w.url+"/.well-known/oauth-protected-resource/docs", nil)
	r.Host = "evil.example:443"
	resp, err := w.httpClient().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a foreign Host got %d", resp.StatusCode)
	}
}

// TestClientCredentialsAgentIsAnIdentity: an agent with no person behind
// it gets its token by client credentials (with the resource parameter)
// and is served as its own identity.
func TestClientCredentialsAgentIsAnIdentity(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {w.url + "/docs"}}
	req, _ := http.NewRequest(http.MethodPost, w.as.URL+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("ci", "ci-secret")
	resp, err := w.httpClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("client credentials: %d %v", resp.StatusCode, err)
	}
	resp, body := w.post(t, tok.AccessToken, "", initBody)
	if resp.StatusCode != http.StatusOK || resp.Header.Get(sessionHeader) == "" {
		t.Fatalf("the agent's initialize: %d %s", resp.StatusCode, body)
	}
	// A wrong secret gets no token at all.
	req, _ = http.NewRequest(http.MethodPost, w.as.URL+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("ci", "guess")
	resp, err = w.httpClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a wrong client secret got %d", resp.StatusCode)
	}
}
