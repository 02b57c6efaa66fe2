package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTeamGatewayRefusals: a gateway on the network never starts without
// TLS (or a named trusted proxy) and --auth, and the loopback flags keep
// their meaning.
func TestTeamGatewayRefusals(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MCPSEAL_HOME", filepath.Join(dir, "home"))
	routes := filepath.Join(dir, "routes.json")
	auth := filepath.Join(dir, "auth.json")
	badAuth := filepath.Join(dir, "bad-auth.json")
	for p, s := range map[string]string{
		routes:  `{"routes":{"mem":{"command":["true"]}}}`,
		auth:    `{"version": 1, "resource": "https://gw.example.com", "issuers": [{"issuer": "https://127.0.0.1:1"}]}`,
		badAuth: `{"version": 1, "resource": "https://gw.example.com", "issuers": [{"issuer": "https://idp.example.com", "audience": "s3cr3t"}]}`,
	} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	gw := []string{"gateway", "--routes", routes}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"network without auth", []string{"--listen", "0.0.0.0:0", "--tls-cert", "c", "--tls-key", "k"}, ExitUsage, "needs --auth"},
		{"network without TLS", []string{"--listen", "0.0.0.0:0", "--auth", auth}, ExitUsage, "needs TLS"},
		{"listen on a name", []string{"--listen", "gw.example.com:8443", "--auth", auth}, ExitUsage, "IP literal"},
		{"listen and port", []string{"--listen", "127.0.0.1:0", "--port", "9"}, ExitUsage, "excludes --bind and --port"},
		{"cert without key", []string{"--tls-cert", "c", "--no-token"}, ExitUsage, "go together"},
		{"auth and no token", []string{"--auth", auth, "--no-token"}, ExitUsage, "replaces the launch token"},
		{"proxy without a trusted list", []string{"--listen", "0.0.0.0:0", "--auth", auth, "--insecure-behind-proxy"}, ExitUsage, "--trusted-proxy"},
		{"trusted proxy alone", []string{"--trusted-proxy", "10.0.0.0/8", "--no-token"}, ExitUsage, "is for --insecure-behind-proxy"},
		{"bad trusted proxy", []string{"--listen", "0.0.0.0:0", "--auth", auth, "--insecure-behind-proxy", "--trusted-proxy", "10.0.0.1"}, ExitUsage, "not a CIDR"},
		{"unreadable key pair", []string{"--listen", "0.0.0.0:0", "--auth", auth, "--tls-cert", filepath.Join(dir, "no.pem"), "--tls-key", filepath.Join(dir, "no.key")}, ExitFailure, "cannot load --tls-cert"},
		{"auth file with an unknown key", []string{"--listen", "127.0.0.1:0", "--auth", badAuth}, ExitFailure, `unknown key "audience"`},
		{"an issuer that cannot be reached", []string{"--listen", "127.0.0.1:0", "--auth", auth}, ExitFailure, "auth: issuer 0"},
	} {
		var out, errb bytes.Buffer
		code := Main(append(gw, c.args...), strings.NewReader(""), &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", c.name, code, errb.String(), c.code, c.want)
		}
		if strings.Contains(errb.String(), "s3cr3t") {
			t.Errorf("%s: stderr names a value of the auth file: %q", c.name, errb.String())
		}
	}
}
