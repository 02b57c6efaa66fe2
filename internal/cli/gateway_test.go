package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGatewayCommandRefusals: the gateway does not start where it must
// not, and says why on stderr, never with the token.
func TestGatewayCommandRefusals(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MCPSEAL_HOME", filepath.Join(dir, "home"))
	routes := filepath.Join(dir, "routes.json")
	if err := os.WriteFile(routes, []byte(`{"routes":{"mem":{"command":["true"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no routes", []string{"gateway"}, ExitUsage, "--routes"},
		{"non-loopback bind", []string{"gateway", "--routes", routes, "--bind", "0.0.0.0", "--no-token"}, ExitUsage, "127.0.0.1 or ::1"},
		{"name bind", []string{"gateway", "--routes", routes, "--bind", "localhost", "--no-token"}, ExitUsage, "127.0.0.1 or ::1"},
		{"token file and no token", []string{"gateway", "--routes", routes, "--no-token", "--token-file", filepath.Join(dir, "t")}, ExitUsage, "exclude"},
		{"bad origin", []string{"gateway", "--routes", routes, "--allow-origin", "evil.example.com", "--no-token"}, ExitUsage, "not an origin"},
		{"no terminal for the token", []string{"gateway", "--routes", routes, "--port", "0"}, ExitFailure, "not a terminal"},
		{"bad routes file", []string{"gateway", "--routes", filepath.Join(dir, "missing.json"), "--no-token"}, ExitFailure, "routes file"},
	} {
		var out, errb bytes.Buffer
		code := Main(c.args, strings.NewReader(""), &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", c.name, code, errb.String(), c.code, c.want)
		}
		if strings.Contains(errb.String(), "mcpseal_gw_") {
			t.Errorf("%s: a token reached stderr: %q", c.name, errb.String())
		}
	}
}
