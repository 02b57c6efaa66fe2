package egress

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestUpstreamURLRules: what NewUpstream accepts before anything is sent.
func TestUpstreamURLRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url     string
		private bool
		resolve string
		ok      bool
	}{
		{"https://mcp.example.com/mcp", false, "", true},
		{"http://mcp.example.com/mcp", false, "", false},
		{"https://127.0.0.1/mcp", false, "", false},
		{"https://[::1]:8443/mcp", false, "", false},
		{"https://169.254.169.254/latest", false, "", false},
		{"https://169.254.169.254/latest", true, "", false},
		{"https://10.1.2.3/mcp", true, "", true},
		{"http://127.0.0.1:3000/mcp", true, "", true},
		{"http://192.168.1.20:8080/mcp", true, "", false},
		{"http://local.test:3000/mcp", true, "127.0.0.1", true},
		{"http://local.test:3000/mcp", true, "10.0.0.5", false},
		{"https://rebind.test/mcp", true, "169.254.169.254", false},
		{"https://link.test/mcp", true, "fe80::1", false},
		{"https://user:pw@mcp.example.com/mcp", false, "", false},
		{"https://mcp.example.com/mcp#frag", false, "", false},
		{"ftp://mcp.example.com/", false, "", false},
		{"mcp.example.com/mcp", false, "", false},
	} {
		opts := Options{Private: c.private}
		if c.resolve != "" {
			opts.Resolver = resolveTo(c.resolve)
		}
		up, err := NewUpstream(c.url, opts)
		if (err == nil) != c.ok {
			t.Errorf("NewUpstream(%q, private=%v, resolve=%q): err = %v, want ok=%v", c.url, c.private, c.resolve, err, c.ok)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("error echoes user information: %v", err)
		}
		if up != nil {
			up.Kill()
		}
	}
}

// TestPrivateUpstreamResolvedOnce: an allow-listed private upstream is
// resolved when it is created and never again, so a later answer that
// points elsewhere is never used.
func TestPrivateUpstreamResolvedOnce(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Connection", "close")
		jsonResult(w, r)
	}))
	defer srv.Close()
	_, port, _ := strings.Cut(srv.Listener.Addr().String(), "127.0.0.1:")
	res := resolveTo("127.0.0.1", "169.254.169.254")
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	up, err := NewUpstream("https://mcp.example.com:"+port+"/mcp", Options{Private: true, Resolver: res, RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Kill()
	p := newPeer(t, up)
	for i := 1; i <= 3; i++ {
		p.send(fmt.Sprintf(listReq, i))
		if m := p.answer(); m.Result == nil {
			t.Fatalf("request %d: %s", i, m.Error)
		}
	}
	if res.count() != 1 || hits.Load() != 3 {
		t.Errorf("%d lookups and %d requests, want 1 and 3", res.count(), hits.Load())
	}
}

// TestCredentialLoading: a credential comes from exactly one source, one
// printable line, in a header that can carry it; errors never show it.
func TestCredentialLoading(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "Bearer sk-secret-1\n")
	twoLines := write("two", "Bearer sk-secret-2\nX-Injected: 1\n")
	empty := write("empty", "\n")
	env := map[string]string{"TOKEN": "Bearer sk-secret-3", "BAD": "sk-secret-4\r\nX: y"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		header, file, env string
		ok                bool
	}{
		{"Authorization", good, "", true},
		{"X-Api-Key", "", "TOKEN", true},
		{"Authorization", twoLines, "", false},
		{"Authorization", empty, "", false},
		{"Authorization", "", "BAD", false},
		{"Authorization", "", "UNSET", false},
		{"Authorization", good, "TOKEN", false},
		{"Authorization", "", "", false},
		{"Host", good, "", false},
		{"Mcp-Session-Id", good, "", false},
		{"Bad Header", good, "", false},
	} {
		cred, err := LoadCredential(c.header, c.file, c.env, getenv)
		if (err == nil) != c.ok {
			t.Errorf("LoadCredential(%q, %q, %q): err = %v, want ok=%v", c.header, c.file, c.env, err, c.ok)
		}
		if err != nil && strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("error shows the credential: %v", err)
		}
		if cred != nil && strings.Contains(fmt.Sprint(cred), "sk-secret") {
			t.Errorf("credential prints its value: %v", cred)
		}
	}
}

// TestAmbientHeadersStripped: whatever a caller put in a request, the
// credential-bearing headers are gone before it leaves.
func TestAmbientHeadersStripped(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	for _, k := range []string{"Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key", "X-Auth-Token", "X-Custom-Secret", "X-Amz-Security-Token", "Set-Cookie"} {
		h.Set(k, "v")
	}
	h.Set("Mcp-Session-Id", "s1")
	h.Set("Accept", "application/json")
	stripHeaders(h)
	if len(h) != 2 || h.Get("Mcp-Session-Id") != "s1" || h.Get("Accept") == "" {
		t.Errorf("after stripping: %v", h)
	}
}

func TestCredentialFileFromWrap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"version":1,"headers":{"Authorization":"Bearer sk-1"}}`, true},
		{`{"version":1,"headers":{"Authorization":"Bearer sk-1","X-Other":"2"}}`, false},
		{`{"version":2,"headers":{"Authorization":"Bearer sk-1"}}`, false},
		{`{"version":1,"headers":{"Host":"evil"}}`, false},
		{`{"version":1,"headers":{"Authorization":"Bearer\nX: y"}}`, false},
		{`{"version":1,"headers":{"Authorization":"x"},"extra":1}`, false},
		// Read two ways by encoding/json and a person (known gap 10).
		{`{"version":1,"Version":2,"headers":{"Authorization":"Bearer sk-1"}}`, false},
		{`{"version":1,"headers":{"Authorization":"Bearer sk-1"},"headers":{"Authorization":"Bearer sk-2"}}`, false},
		{`{"version":1,"headers":{"Authorization":"Bearer sk-1","authorization":"Bearer sk-2"}}`, false},
	} {
		path := filepath.Join(dir, "cred.json")
		if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := LoadCredentialFile(path)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok %v", tc.body, err, tc.ok)
		}
		if err != nil && strings.Contains(err.Error(), "sk-1") {
			t.Errorf("error shows the credential: %v", err)
		}
		if c != nil && c.String() != "Authorization: [redacted]" {
			t.Errorf("String() = %q", c.String())
		}
	}
}
