package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePolicy(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPolicyCheckCommand(t *testing.T) {
	home := t.TempDir()
	t.Setenv("MCPSEAL_HOME", home)
	if code, out, _ := runCLI(t, "policy-check"); code != 0 || !strings.Contains(out, "the built-in defaults apply") {
		t.Fatalf("no file: %d %s", code, out)
	}
	writePolicy(t, home, `{"version": 1, "servers": {"memory": {"deny": ["delete_entities"]}},
	  "providers": {"check": {"kind": "command", "command": ["/usr/local/bin/check"]}}}`)
	code, out, _ := runCLI(t, "policy-check")
	if code != 0 || !strings.Contains(out, "policy ok: "+filepath.Join(home, "policy.json")) || !strings.Contains(out, "20b751c3ec6ffe87  memory") || !strings.Contains(out, "provider check (command)") {
		t.Fatalf("valid: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "policy-check", "--json")
	var pj policyCheckJSON
	if err := json.Unmarshal([]byte(out), &pj); code != 0 || err != nil || !pj.OK || pj.Version != 1 || len(pj.Servers) != 1 || pj.Providers[0].Kind != "command" {
		t.Fatalf("--json: %d %v\n%s", code, err, out)
	}
}

// TestPolicyCheckReportsLineAndPath: an unknown key is reported with its
// line, column and key path, and the command exits 1.
func TestPolicyCheckReportsLineAndPath(t *testing.T) {
	t.Setenv("MCPSEAL_HOME", t.TempDir())
	path := writePolicy(t, t.TempDir(), "{\n  \"version\": 1,\n  \"servers\": {\"memory\": {\"tools\": {\"x\": {\"confirmm\": true}}}}\n}\n")
	code, _, errOut := runCLI(t, "policy-check", path)
	if code != ExitFailure || !strings.Contains(errOut, "mcpseal: error: "+path+":3:42: servers.memory.tools.x: unknown key \"confirmm\"") || !strings.Contains(errOut, "mcpseal: hint:") {
		t.Fatalf("%d\n%s", code, errOut)
	}
	code, out, _ := runCLI(t, "policy-check", "--json", path)
	var pj policyCheckJSON
	if err := json.Unmarshal([]byte(out), &pj); code != ExitFailure || err != nil || pj.OK || pj.Error == nil || pj.Error.Line != 3 || pj.Error.Col != 42 || pj.Error.Path != "servers.memory.tools.x" {
		t.Fatalf("--json: %d %v\n%s", code, err, out)
	}
	if code, _, errOut := runCLI(t, "policy-check", filepath.Join(t.TempDir(), "missing.json")); code != ExitFailure || !strings.Contains(errOut, "no such file") {
		t.Errorf("a named missing file: %d %s", code, errOut)
	}
	if code, _, _ := runCLI(t, "policy-check", "a", "b"); code != ExitUsage {
		t.Errorf("two files: %d", code)
	}
}

func TestPolicyCheckRefusesAWritableFile(t *testing.T) {
	t.Setenv("MCPSEAL_HOME", t.TempDir())
	path := writePolicy(t, t.TempDir(), `{"version": 1}`)
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "policy-check", path); code != ExitFailure || !strings.Contains(errOut, "may be written by other users") {
		t.Errorf("%d %s", code, errOut)
	}
}
