package cli

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wireTestdata is the repository's testdata/wire folder.
const wireTestdata = "../../testdata/wire"

// wireHome copies the fake HOME of testdata/wire/home to a temporary
// folder, points HOME and MCPSEAL_HOME there, and returns both.
func wireHome(t *testing.T) (home, state string) {
	t.Helper()
	root := t.TempDir()
	home, state = filepath.Join(root, "home"), filepath.Join(root, "state")
	src := filepath.Join(wireTestdata, "home")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(home, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, bytes.ReplaceAll(data, []byte("@HOME@"), []byte(home)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("MCPSEAL_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CODEX_HOME", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	return home, state
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			out[p] = string(data)
		}
		return err
	})
	return out
}

// TestWrapWritesNothingWithoutConfirmation: no terminal and no --yes: the
// plan is shown and nothing is written.
func TestWrapWritesNothingWithoutConfirmation(t *testing.T) {
	home, _ := wireHome(t)
	before := readTree(t, home)
	r := runPins(t, "", "wrap", "--skip-remote")
	r.want(t, ExitFailure, []string{"wrap    memory", "now: "}, []string{"needs confirmation", "--yes"})
	if after := readTree(t, home); !equalTrees(before, after) {
		t.Error("wrap without --yes changed files")
	}
	r = runPins(t, "", "wrap", "--dry-run", "--yes")
	r.want(t, ExitFailure, []string{"dry run: nothing was written"}, nil)
	if after := readTree(t, home); !equalTrees(before, after) {
		t.Error("wrap --dry-run changed files")
	}
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestWrapStatusUnwrap runs the three commands over the fake HOME: wrap
// (the invalid file makes it exit 1), status (text and --json, exit 1:
// remote servers are left), unwrap (every file as it was).
func TestWrapStatusUnwrap(t *testing.T) {
	home, state := wireHome(t)
	self, err := selfPath()
	if err != nil {
		t.Fatal(err)
	}
	before := readTree(t, home)

	r := runPins(t, "", "wrap", "--yes", "--skip-remote")
	r.want(t, ExitFailure, []string{"wrote " + filepath.Join(home, ".cursor", "mcp.json"), "backups: " + filepath.Join(state, "backups"),
		"left alone: line 5, column 7", "skip    docs: remote server (--skip-remote)"}, nil)
	cursor, _ := os.ReadFile(filepath.Join(home, ".cursor", "mcp.json"))
	if !bytes.Contains(cursor, []byte(`"command": `+jsonQuote(self))) || !bytes.Contains(cursor, []byte("// Cursor reads this file; comments are kept.")) {
		t.Errorf("cursor config after wrap:\n%s", cursor)
	}

	r = runPins(t, "", "wrap", "--yes", "--skip-remote")
	r.want(t, ExitFailure, []string{"nothing to change", "ok      memory: already wrapped"}, nil)

	r = runPins(t, "", "status")
	r.want(t, ExitFailure, []string{"not everything found is protected"}, nil)
	out := strings.ReplaceAll(r.stdout, home, "@HOME@")
	wireGolden(t, "cli-status.txt", out)

	r = runPins(t, "", "status", "--json")
	if r.code != ExitFailure {
		t.Fatalf("status --json exit %d", r.code)
	}
	var js statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &js); err != nil {
		t.Fatal(err)
	}
	if js.Version != 1 || js.Enforcing || js.Summary.States["protected"] != 16 || js.Summary.Unreadable != 1 || js.Summary.ProjectFiles != 1 {
		t.Errorf("status --json summary %+v", js.Summary)
	}

	r = runPins(t, "", "unwrap", "--yes")
	r.want(t, ExitFailure, []string{"unwrap  memory: restored from the record of the original entry"}, nil)
	after := readTree(t, home)
	for p, data := range before {
		if after[p] != data {
			t.Errorf("%s differs after unwrap:\n%s", p, after[p])
		}
	}
}

// TestStatusExitCodes: 0 only when every server found is protected.
func TestStatusExitCodes(t *testing.T) {
	_, state := wireHome(t)
	self, err := selfPath()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, args, env string
		code            int
		out             string
	}{
		{"guard", `["run", "--name", "a", "--home", ` + jsonQuote(state) + `, "--", "npx", "srv"]`, "", ExitOK, "every server found is protected"},
		{"no home", `["run", "--name", "a", "--", "npx", "srv"]`, "", ExitFailure, "a client that does not pass MCPSEAL_HOME on"},
		{"home elsewhere", `["run", "--name", "a", "--home", "/elsewhere", "--", "npx", "srv"]`, "", ExitFailure, "its --home keeps the pins outside"},
		{"relative home", `["run", "--name", "a", "--home", "rel", "--", "npx", "srv"]`, "", ExitFailure, "broken"},
		{"other trusted keys", `["run", "--home", ` + jsonQuote(state) + `, "--lock-host-config", "/tmp/keys.json", "--", "npx"]`, "", ExitFailure, "its --lock-host-config names trusted keys"},
		{"own policy", `["run", "--home", ` + jsonQuote(state) + `, "--policy", "/tmp/open.json", "--", "npx"]`, "", ExitOK, "its --policy replaces"},
		{"home wins over env", `["run", "--home", ` + jsonQuote(state) + `, "--", "npx"]`, `, "env": {"MCPSEAL_HOME": "/elsewhere"}`, ExitOK, "protected"},
		{"monitor", `["run", "--posture", "monitor", "--", "npx"]`, "", ExitFailure, "monitor-only"},
		{"unknown flag", `["run", "--bogus", "--", "npx"]`, "", ExitFailure, "broken"},
		{"missing dash", `["run", "--name", "a", "npx"]`, "", ExitFailure, "broken"},
		{"pins elsewhere", `["run", "--", "npx"]`, `, "env": {"MCPSEAL_HOME": "/elsewhere"}`, ExitFailure, "baseline-outside"},
		{"pins here", `["run", "--", "npx"]`, `, "env": {"MCPSEAL_HOME": ` + jsonQuote(state) + `}`, ExitOK, "protected"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
			cfg := `{"mcpServers": {"a": {"command": ` + jsonQuote(self) + `, "args": ` + c.args + c.env + `}}}`
			os.WriteFile(path, []byte(cfg), 0o600)
			r := runPins(t, "", "status", "--config", path)
			r.want(t, c.code, []string{c.out}, nil)
		})
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestWrapLockMustBeAbsolute: outside a project, a relative lock would be
// read from whatever folder the client starts the server in.
func TestWrapLockMustBeAbsolute(t *testing.T) {
	wireHome(t)
	r := runPins(t, "", "wrap", "--lock", "mcpseal.lock", "--yes")
	r.want(t, ExitUsage, nil, []string{"--lock"})
	r = runPins(t, "", "wrap", "--posture", "lenient", "--yes")
	r.want(t, ExitUsage, nil, []string{"posture"})
}

// TestPolicyCommand writes every product's files (the wire package's
// golden files) and refuses a relative lock.
func TestPolicyCommand(t *testing.T) {
	out := t.TempDir()
	approved := filepath.Join(wireTestdata, "policy", "approved.json")
	r := runPins(t, "", "policy", "all", "--config", approved, "--lock", "/etc/mcpseal/mcpseal.lock", "--mcpseal", "/usr/local/bin/mcpseal", "--out", out)
	r.want(t, ExitOK, []string{"wrote " + filepath.Join(out, "claude-code", "managed-settings.json"), "forwarded by name only", "GITHUB_PERSONAL_ACCESS_TOKEN"}, nil)
	for _, f := range []string{"claude-code/managed-mcp.json", "claude-code/managed-settings.json", "vscode/managed-settings.json", "codex/requirements.toml", "codex/config.toml", "cursor/cursor-dashboard.txt"} {
		got, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(wireTestdata, "golden", "policy", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from testdata/wire/golden/policy/%s", f, f)
		}
	}
	r = runPins(t, "", "policy", "codex", "--config", approved, "--lock", "relative.lock")
	r.want(t, ExitUsage, nil, []string{"absolute path"})
	r = runPins(t, "", "policy", "jetbrains", "--config", approved)
	r.want(t, ExitUsage, nil, []string{"unknown product"})
	r = runPins(t, "", "policy", "codex")
	r.want(t, ExitUsage, nil, []string{"--config"})
}

// wireGolden compares got with testdata/wire/golden/name.
func wireGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(wireTestdata, "golden", name)
	if os.Getenv("MCPSEAL_UPDATE_GOLDEN") != "" {
		os.WriteFile(path, []byte(got), 0o644)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s: %v (set MCPSEAL_UPDATE_GOLDEN=1 to create it)", name, err)
	}
	if got != string(want) {
		t.Errorf("%s differs from its golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
