package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWrappedEntryRunsAsTheClientRunsIt: `mcpseal wrap` rewrites a client
// config; the wrapped entry's command line, started the way a client
// starts it (the command and args from the file, with the Go SDK client
// over mcp.CommandTransport), runs the gate in front of the real server,
// which lists its tools; the first session pins the server under the
// entry's name; status calls it protected; unwrap gives the file back.
func TestWrappedEntryRunsAsTheClientRunsIt(t *testing.T) {
	t.Parallel()
	h := home(t)
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	baseDefs().write(t, tools)
	cfg := filepath.Join(dir, "mcp.json")
	original := `{
  // a client config, with a comment that must survive
  "mcpServers": {
    "e2e-tools": {
      "command": ` + quote(bin.sdkserver) + `,
      "args": [` + quote(tools) + `]
    }
  }
}
`
	if err := os.WriteFile(cfg, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := mcpseal(t, h, "wrap", "--config", cfg, "--yes")
	wantExit(t, "wrap", code, exitOK)
	if t.Failed() {
		t.Fatalf("wrap:\n%s\n%s", out, errOut)
	}
	wrapped, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wrapped), "// a client config, with a comment that must survive") {
		t.Errorf("the comment is gone:\n%s", wrapped)
	}
	var file struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	stripped := strings.Replace(string(wrapped), "// a client config, with a comment that must survive", "", 1)
	if err := json.Unmarshal([]byte(stripped), &file); err != nil {
		t.Fatalf("wrapped config: %v\n%s", err, wrapped)
	}
	entry := file.MCPServers["e2e-tools"]
	self, err := filepath.EvalSymlinks(bin.mcpseal)
	if err != nil {
		t.Fatal(err)
	}
	if entry.Command != self {
		t.Errorf("command %q, want the absolute path of the binary %q", entry.Command, self)
	}
	if want := []string{"run", "--name", "e2e-tools", "--home", h, "--", bin.sdkserver, tools}; !slices.Equal(entry.Args, want) {
		t.Errorf("args %q, want %q", entry.Args, want)
	}

	// Start it as the client would, with an environment filtered the way
	// Codex filters it (no MCPSEAL_HOME): --home on the line keeps the
	// pins in h.
	filtered := slices.DeleteFunc(environ(t, h), func(kv string) bool { return strings.HasPrefix(kv, "MCPSEAL_HOME=") })
	s, err := connectSDK(t, filtered, "", append([]string{entry.Command}, entry.Args...)...)
	if err != nil {
		t.Fatal(err)
	}
	names, err := toolNames(t, s.cs)
	if err != nil || !slices.Equal(names, []string{"add", "echo"}) {
		t.Fatalf("tools through the wrapped entry = %v, %v", names, err)
	}
	wantExit(t, "wrapped session", s.close(), exitOK)
	if !strings.Contains(s.stderr.String(), "mcpseal: pinned") {
		t.Errorf("the gate did not pin the server:\n%s", s.stderr.String())
	}
	list, _, code := mcpseal(t, h, "list")
	wantExit(t, "list", code, exitOK)
	if !strings.Contains(list, "e2e-tools") {
		t.Errorf("list does not show the entry's name:\n%s", list)
	}

	out, _, code = mcpseal(t, h, "status", "--config", cfg)
	wantExit(t, "status", code, exitOK)
	if !strings.Contains(out, "protected        e2e-tools") {
		t.Errorf("status:\n%s", out)
	}

	_, _, code = mcpseal(t, h, "unwrap", "--config", cfg, "--yes")
	wantExit(t, "unwrap", code, exitOK)
	if restored, _ := os.ReadFile(cfg); string(restored) != original {
		t.Errorf("unwrap did not restore the file:\n%s", restored)
	}

	// Pins survive: wrapped again, the server is verified against the
	// pin the first session made, not pinned afresh.
	_, _, code = mcpseal(t, h, "wrap", "--config", cfg, "--yes")
	wantExit(t, "wrap again", code, exitOK)
	s, err = connectSDK(t, environ(t, h), "", append([]string{entry.Command}, entry.Args...)...)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := toolNames(t, s.cs); err != nil || !slices.Equal(names, []string{"add", "echo"}) {
		t.Fatalf("tools after unwrap and wrap = %v, %v", names, err)
	}
	wantExit(t, "second session", s.close(), exitOK)
	if strings.Contains(s.stderr.String(), "mcpseal: pinned") {
		t.Errorf("the server was pinned afresh after unwrap and wrap:\n%s", s.stderr.String())
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
