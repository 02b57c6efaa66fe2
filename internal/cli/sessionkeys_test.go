package cli

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpseal/mcpseal/sessionid"
)

// TestGatewaySessionKeyRefusals: a key file others may read, a link to a
// FIFO, or a malformed file stops the gateway, and the error never quotes
// a key.
func TestGatewaySessionKeyRefusals(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MCPSEAL_HOME", filepath.Join(dir, "home"))
	routes := filepath.Join(dir, "routes.json")
	if err := os.WriteFile(routes, []byte(`{"routes":{"mem":{"command":["true"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	line, err := sessionid.NewKey("k1", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.Fields(line)[1]
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	readable := write("readable", sessionid.FileHeader+line, 0o644)
	malformed := write("malformed", sessionid.FileHeader+"K1 "+key+"\n", 0o600)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, file, want string }{
		{"readable by others", readable, "read or written by others"},
		{"malformed", malformed, "key line"},
		{"fifo", fifo, "not a regular file"},
		{"missing", filepath.Join(dir, "none"), "cannot open"},
	} {
		var out, errb bytes.Buffer
		code := Main([]string{"gateway", "--routes", routes, "--no-token", "--port", "0", "--session-key", c.file}, strings.NewReader(""), &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want %q", c.name, code, errb.String(), c.want)
		}
		if strings.Contains(errb.String(), key) {
			t.Errorf("%s: the key reached stderr", c.name)
		}
	}
	good := write("good", sessionid.FileHeader+line, 0o600)
	if k, err := readSessionKeys(good); err != nil || k.Current() != "k1" {
		t.Fatalf("a good key file: %v", err)
	}
}
