package wire

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// TestPolicyOutputs: golden policy files for every product.
func TestPolicyOutputs(t *testing.T) {
	approved, err := ReadApproved(filepath.Join(testdata, "policy", "approved.json"))
	if err != nil {
		t.Fatal(err)
	}
	o := PolicyOptions{Self: "/usr/local/bin/mcpseal", Lock: "/etc/mcpseal/mcpseal.lock"}
	for _, p := range Products {
		files, err := Policies(p, approved, o)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for name, data := range files {
			golden(t, "policy/"+p+"/"+name, data)
			if bytes.Contains(data, []byte("ghp_this_value_is_never_written")) {
				t.Errorf("%s/%s holds a secret value", p, name)
			}
			if strings.HasSuffix(name, ".toml") {
				var m map[string]any
				if _, err := toml.Decode(string(data), &m); err != nil {
					t.Errorf("%s/%s is not valid TOML: %v", p, name, err)
				}
			}
			if strings.HasSuffix(name, ".json") {
				if _, err := ParseJSONC(data); err != nil {
					t.Errorf("%s/%s is not valid JSON: %v", p, name, err)
				}
			}
		}
	}
}

// TestPolicyRefusesRelativePaths: a relative lock or mcpseal path would be
// read from an unknown folder on every managed machine.
func TestPolicyRefusesRelativePaths(t *testing.T) {
	approved := []Approved{{Name: "a", Command: "npx"}}
	for _, o := range []PolicyOptions{
		{Self: "/usr/local/bin/mcpseal", Lock: "mcpseal.lock"},
		{Self: "bin/mcpseal"},
	} {
		for _, p := range Products {
			if _, err := Policies(p, approved, o); !errors.Is(err, ErrRelativePath) {
				t.Errorf("%s %+v: %v, want ErrRelativePath", p, o, err)
			}
		}
	}
}

// TestPolicyRefusesSecretsInHeaders: a remote server's headers would put
// a secret in a file every user can read.
func TestPolicyRefusesSecretsInHeaders(t *testing.T) {
	_, err := ReadApproved(filepath.Join(testdata, "policy", "with-headers.json"))
	if err == nil || !strings.Contains(err.Error(), "never carries secrets") {
		t.Errorf("err = %v", err)
	}
}

// TestAdminPolicyDocShowsTheGoldenFiles: docs/admin-policy.md quotes the
// generated files exactly.
func TestAdminPolicyDocShowsTheGoldenFiles(t *testing.T) {
	doc, err := os.ReadFile("../docs/admin-policy.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"claude-code/managed-mcp.json", "claude-code/managed-settings.json", "codex/requirements.toml", "codex/config.toml", "cursor/cursor-dashboard.txt"} {
		g, err := os.ReadFile(filepath.Join(testdata, "golden", "policy", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(doc, bytes.TrimSpace(g)) {
			t.Errorf("docs/admin-policy.md does not show %s as generated", f)
		}
	}
}
