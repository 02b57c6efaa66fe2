package httpgw

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/pin"
)

const testToken = "mcpseal_gw_test"

// gwWorld is a gateway served by an httptest server on 127.0.0.1.
type gwWorld struct {
	gw     *Gateway
	srv    *httptest.Server
	url    string // http://127.0.0.1:PORT
	home   string
	events *eventLog
}

type eventLog struct {
	mu  sync.Mutex
	all []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	l.all = append(l.all, e)
	l.mu.Unlock()
}

func (l *eventLog) has(kind, reason string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.all {
		if e.Kind == kind && e.Reason == reason {
			return true
		}
	}
	return false
}

// fakeResolver resolves every name to one address.
type fakeResolver netip.Addr

func (r fakeResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

// newWorld starts a gateway for routes (a routes file). tweak may change
// the configuration before New.
func newWorld(t testing.TB, routes string, tweak func(*Config)) *gwWorld {
	t.Helper()
	rs, err := ParseRoutes([]byte(routes))
	if err != nil {
		t.Fatal(err)
	}
	w := &gwWorld{home: t.TempDir(), events: &eventLog{}}
	store, err := pin.Open(w.home)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Routes: rs, Token: testToken, Pins: store, OnEvent: w.events.add, Resolver: fakeResolver(netip.MustParseAddr("127.0.0.1"))}
	if tweak != nil {
		tweak(&cfg)
	}
	w.gw, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.srv = httptest.NewServer(w.gw)
	w.url = w.srv.URL
	port, _ := strconv.Atoi(w.url[strings.LastIndexByte(w.url, ':')+1:])
	w.gw.SetPort(port)
	t.Cleanup(func() {
		w.srv.Close()
		w.gw.Close()
	})
	return w
}

// trust makes cfg trust srv's TLS certificate.
func trust(srv *httptest.Server) func(*Config) {
	return func(c *Config) {
		pool := x509.NewCertPool()
		pool.AddCert(srv.Certificate())
		c.RootCAs = pool
	}
}

// req is one raw request to the gateway.
type req struct {
	method, path, body string
	header             map[string]string
	noDefaults         bool
}

func (w *gwWorld) do(t *testing.T, r req) (*http.Response, []byte) {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodPost
	}
	hr, err := http.NewRequest(r.method, w.url+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if !r.noDefaults {
		hr.Header.Set("Authorization", "Bearer "+testToken)
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range r.header {
		if k == "Host" {
			hr.Host = v
			continue
		}
		if v == "" {
			hr.Header.Del(k)
			continue
		}
		hr.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// rpcError decodes a JSON-RPC error body.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    struct {
		Reason string `json:"reason"`
	} `json:"data"`
}

// wantRefused checks a refusal's status, code and reason.
func wantRefused(t *testing.T, resp *http.Response, body []byte, status, code int, reason string) {
	t.Helper()
	var m struct {
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.Error == nil {
		t.Fatalf("status %d body %s: want a JSON-RPC error", resp.StatusCode, body)
	}
	if resp.StatusCode != status || m.Error.Code != code || m.Error.Data.Reason != reason {
		t.Fatalf("got %d %d %q, want %d %d %q (body %s)", resp.StatusCode, m.Error.Code, m.Error.Data.Reason, status, code, reason, body)
	}
}

// sseFrames returns the data of the events in an event-stream body, or
// the body itself when it is JSON.
func sseFrames(body []byte) [][]byte {
	if !bytes.HasPrefix(body, []byte("event:")) && !bytes.HasPrefix(body, []byte("data:")) && !bytes.HasPrefix(body, []byte("id:")) {
		return [][]byte{body}
	}
	var out [][]byte
	for _, line := range bytes.Split(body, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			out = append(out, d)
		}
	}
	return out
}

// routedTo is a team world tweak: routes instead of the default upstream,
// with the upstream's certificate trusted, and pol as the identity policy
// when it is not nil.
func routedTo(t *testing.T, routes string, cert *x509.Certificate, pol IdentityPolicy) func(*Config) {
	return func(c *Config) {
		rs, err := ParseRoutes([]byte(routes))
		if err != nil {
			t.Fatal(err)
		}
		c.Routes = rs
		pool := x509.NewCertPool()
		pool.AddCert(cert)
		c.RootCAs = pool
		if pol != nil {
			c.Identities = pol
		}
	}
}

// slowRoute is the docs route to the slow upstream.
func (u *slowUpstream) route() string {
	port := u.srv.URL[strings.LastIndexByte(u.srv.URL, ':')+1:]
	return fmt.Sprintf(`{"routes":{"docs":{"url":"https://mcp.example.com:%s/mcp","private":true,"name":"docs"}}}`, port)
}

// modern POSTs one 2026-07-28 message of method (naming name in
// Mcp-Name when it is not "") to the docs route as token's caller.
func (w *teamWorld) modern(t *testing.T, ctx context.Context, token, method, name, body string) (*http.Response, []byte, error) {
	t.Helper()
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.url+"/docs", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set(versionHeader, "2026-07-28")
	r.Header.Set("Mcp-Method", method)
	if name != "" {
		r.Header.Set("Mcp-Name", name)
	}
	resp, err := w.httpClient().Do(r)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b, nil
}

// listModern is a 2026-07-28 tools/list of token's caller declaring the
// capabilities caps (a JSON object); it returns the answer's body.
func (w *teamWorld) listModern(t *testing.T, token string, id int, caps string) string {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}}}`, id, caps)
	_, b, err := w.modern(t, context.Background(), token, "tools/list", "", body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sdkURLSession serves s (an official Go SDK server) behind the url route
// "docs" and opens a 2025-11-25 session through the gateway: initialize,
// then notifications/initialized. It returns the world, the session's
// headers, and the initialize answer.
func sdkURLSession(t *testing.T, s *mcp.Server) (*gwWorld, map[string]string, *http.Response, []byte) {
	t.Helper()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(up.Close) // after the gateway's own cleanup
	w := newWorld(t, `{"routes":{"docs":{"url":"`+up.URL+`/mcp","private":true}}}`, nil)
	resp, body := w.do(t, req{path: "/docs", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`})
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("no session id: %d %s", resp.StatusCode, body)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	w.do(t, req{path: "/docs", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, header: hdr})
	return w, hdr, resp, body
}
