package httpgw

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	docsRoute = `{"routes":{"docs":{"url":"https://mcp.example.com/mcp"}}}`
	// listBody is a legacy request with no session: a request that passed
	// the front door is refused later, for the session (400).
	listBody = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
)

// passedFrontDoor: the request got past the front door to the route.
func passedFrontDoor(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	wantRefused(t, resp, body, http.StatusBadRequest, CodeForbidden, ReasonSession)
}

func TestRequestWithoutToken(t *testing.T) {
	t.Parallel()
	w := newWorld(t, docsRoute, nil)
	for _, auth := range []string{"", "Bearer", "Bearer ", "Basic " + testToken, testToken} {
		resp, body := w.do(t, req{path: "/docs", body: listBody, header: map[string]string{"Authorization": auth}})
		wantRefused(t, resp, body, http.StatusForbidden, CodeForbidden, ReasonToken)
	}
	if !w.events.has(EventRefused, ReasonToken) {
		t.Error("refusal not reported as an event")
	}
}

func TestWrongToken(t *testing.T) {
	t.Parallel()
	w := newWorld(t, docsRoute, nil)
	for _, auth := range []string{"Bearer nope", "Bearer " + testToken + "x", "Bearer " + testToken[:len(testToken)-1], "Bearer  " + testToken} {
		resp, body := w.do(t, req{path: "/docs", body: listBody, header: map[string]string{"Authorization": auth}})
		wantRefused(t, resp, body, http.StatusForbidden, CodeForbidden, ReasonToken)
	}
	resp, body := w.do(t, req{path: "/docs", body: listBody, header: map[string]string{"Authorization": "bearer " + testToken}})
	passedFrontDoor(t, resp, body)
}

// TestDNSRebindingHost: a page whose name was rebound to 127.0.0.1 still
// sends its own Host.
func TestDNSRebindingHost(t *testing.T) {
	t.Parallel()
	w := newWorld(t, docsRoute, nil)
	port := w.url[strings.LastIndexByte(w.url, ':')+1:]
	for _, host := range []string{"evil.example.com:" + port, "evil.example.com", "127.0.0.1", "127.0.0.1:1", "localhost.evil.example:" + port, "127.0.0.2:" + port, "0.0.0.0:" + port, "LOCALHOST:" + port} {
		resp, body := w.do(t, req{path: "/docs", body: listBody, header: map[string]string{"Host": host}})
		wantRefused(t, resp, body, http.StatusForbidden, CodeForbidden, ReasonHost)
	}
	for _, host := range []string{"localhost:" + port, "[::1]:" + port, "127.0.0.1:" + port} {
		resp, body := w.do(t, req{path: "/docs", body: listBody, header: map[string]string{"Host": host}})
		passedFrontDoor(t, resp, body)
	}
}

func TestForeignOrigin(t *testing.T) {
	t.Parallel()
	const allowed = "https://app.example.com"
	w := newWorld(t, docsRoute, func(c *Config) { c.AllowOrigins = []string{allowed} })
	for _, o := range []string{"https://evil.example.com", "null", allowed + ":8443", "http://app.example.com", w.url} {
		resp, body := w.do(t, req{path: "/docs", body: listBody, header: map[string]string{"Origin": o}})
		wantRefused(t, resp, body, http.StatusForbidden, CodeForbidden, ReasonOrigin)
	}
	resp, body := w.do(t, req{path: "/docs", body: listBody, header: map[string]string{"Origin": allowed, "Sec-Fetch-Site": "cross-site"}})
	passedFrontDoor(t, resp, body)
	if resp.Header.Get("Access-Control-Allow-Origin") != allowed {
		t.Errorf("allowed origin answered without CORS headers: %v", resp.Header)
	}
	// A preflight from the allowed origin is answered; from another, refused.
	resp, _ = w.do(t, req{method: http.MethodOptions, path: "/docs", noDefaults: true, header: map[string]string{"Origin": allowed, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, mcp-session-id"}})
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != allowed {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body = w.do(t, req{method: http.MethodOptions, path: "/docs", noDefaults: true, header: map[string]string{"Origin": "https://evil.example.com", "Access-Control-Request-Method": "POST"}})
	wantRefused(t, resp, body, http.StatusForbidden, CodeForbidden, ReasonOrigin)
}

// TestSecFetchSiteCrossSite: a browser that sends no Origin (a navigation,
// a no-cors request) still says where the request comes from.
func TestSecFetchSiteCrossSite(t *testing.T) {
	t.Parallel()
	w := newWorld(t, docsRoute, nil)
	for _, s := range []string{"cross-site", "same-site", "same-origin", "whatever"} {
		resp, body := w.do(t, req{path: "/docs", body: listBody, header: map[string]string{"Sec-Fetch-Site": s}})
		wantRefused(t, resp, body, http.StatusForbidden, CodeForbidden, ReasonSecFetchSite)
	}
	resp, body := w.do(t, req{path: "/docs", body: listBody, header: map[string]string{"Sec-Fetch-Site": "none"}})
	passedFrontDoor(t, resp, body)
}

// TestWrongContentType: an HTML form can POST text/plain or
// application/x-www-form-urlencoded cross-site without a preflight.
func TestWrongContentType(t *testing.T) {
	t.Parallel()
	w := newWorld(t, docsRoute, nil)
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", ""} {
		resp, body := w.do(t, req{path: "/docs", body: listBody, header: map[string]string{"Content-Type": ct}})
		wantRefused(t, resp, body, http.StatusUnsupportedMediaType, CodeForbidden, ReasonContentType)
	}
	resp, body := w.do(t, req{path: "/docs", body: listBody, header: map[string]string{"Content-Type": "application/json; charset=utf-8"}})
	passedFrontDoor(t, resp, body)
}

func TestOversizedBody(t *testing.T) {
	t.Parallel()
	w := newWorld(t, docsRoute, func(c *Config) { c.Limits.MaxBody = 1024 })
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 4096) + `"}}`
	resp, body := w.do(t, req{path: "/docs", body: big})
	wantRefused(t, resp, body, http.StatusRequestEntityTooLarge, CodeForbidden, ReasonTooLarge)
	// Without a Content-Length the cap applies while reading.
	r, err := http.NewRequest(http.MethodPost, w.url+"/docs", struct{ *strings.Reader }{strings.NewReader(big)})
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+testToken)
	r.Header.Set("Content-Type", "application/json")
	r.ContentLength = -1
	resp2, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked oversized body: status %d", resp2.StatusCode)
	}
}

func TestBatchAndGarbageRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t, docsRoute, nil)
	resp, body := w.do(t, req{path: "/docs", body: "[" + listBody + "," + listBody + "]"})
	wantRefused(t, resp, body, http.StatusBadRequest, CodeForbidden, ReasonBatch)
	resp, body = w.do(t, req{path: "/docs", body: "{not json"})
	wantRefused(t, resp, body, http.StatusBadRequest, -32700, ReasonInvalid)
	resp, body = w.do(t, req{path: "/nope", body: listBody})
	wantRefused(t, resp, body, http.StatusNotFound, CodeForbidden, ReasonRoute)
	resp, body = w.do(t, req{method: http.MethodPut, path: "/docs", body: listBody})
	wantRefused(t, resp, body, http.StatusMethodNotAllowed, CodeForbidden, ReasonMethod)
}

func TestNonLoopbackBind(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.168.1.10:0", "10.0.0.1:0", "localhost:0", "127.0.0.2:0", "[::ffff:127.0.0.1]:0"} {
		l, err := Listen(addr)
		if !errors.Is(err, ErrNotLoopback) {
			if l != nil {
				l.Close()
			}
			t.Errorf("Listen(%q): err = %v, want ErrNotLoopback", addr, err)
		}
	}
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}

func TestTokenFileIs0600AndFresh(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "gateway.token")
	a, b := NewToken(), NewToken()
	if a == b || len(a) < 40 {
		t.Fatalf("tokens %q %q", a, b)
	}
	for _, tok := range []string{a, b} {
		if err := WriteToken(path, tok); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("token file mode %v", fi.Mode().Perm())
		}
		got, _ := os.ReadFile(path)
		if strings.TrimSpace(string(got)) != tok {
			t.Errorf("token file holds %q", got)
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), link); err != nil {
		t.Fatal(err)
	}
	if err := WriteToken(link, a); err == nil {
		t.Error("wrote the token through a symlink")
	}
}
