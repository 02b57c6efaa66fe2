package wire

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestEnvironmentFilteringCannotMoveThePins: a client that filters the
// environment it gives servers (Codex) drops MCPSEAL_HOME, so wrap names
// the state folder on the launch line (--home), adds it to a wrapped line
// that lacks it, and status flags a line whose pins would land elsewhere.
func TestEnvironmentFilteringCannotMoveThePins(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(t)
	o.Run = fakeRun{home: true}
	o.DefaultHome = filepath.Join(dir, "home", ".mcpseal")
	path := filepath.Join(dir, "mcp.json")
	cfg := `{"mcpServers": {
  "plain": {"command": "npx", "args": ["srv"]},
  "old": {"command": "` + testSelf + `", "args": ["run", "--name", "old", "--", "npx", "old"]},
  "chosen": {"command": "` + testSelf + `", "args": ["run", "--", "npx", "c"], "env": {"MCPSEAL_HOME": "/elsewhere"}}
}}`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	files := []File{{Client: "custom", Path: path, Shape: ShapeMCPServers}}
	states := func() map[string]State {
		m := map[string]State{}
		for _, s := range Status(files, o).Servers {
			m[s.Name] = s.State
		}
		return m
	}
	if got := states(); got["old"] != BaselineOutside || got["chosen"] != BaselineOutside || got["plain"] != NotWrapped {
		t.Fatalf("before wrap: %v", got)
	}
	p := PlanWrap(files, o, &Records{Version: recordsVersion})
	if got := actions(p); got["custom/mcpServers/plain"] != Wrap || got["custom/mcpServers/old"] != Update || got["custom/mcpServers/chosen"] != Keep {
		t.Fatalf("plan: %v", got)
	}
	for _, c := range p.Files[0].Changes {
		if c.Entry.Name == "plain" {
			want := []string{testSelf, "run", "--name", "plain", "--home", o.Home, "--", "npx", "srv"}
			if !slices.Equal(c.After, want) {
				t.Errorf("wrapped line %q, want %q", c.After, want)
			}
		}
		if c.Entry.Name == "old" && c.Reason != "adds --home" {
			t.Errorf("update reason %q", c.Reason)
		}
	}
	if _, err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	if got := states(); got["old"] != Protected || got["plain"] != Protected || got["chosen"] != BaselineOutside {
		t.Errorf("after wrap: %v", got)
	}
}

// TestLineWithoutHomeUnderTheDefaultStateFolder: with MCPSEAL_HOME unset
// a client that drops it changes nothing, so a line without --home is
// protected.
func TestLineWithoutHomeUnderTheDefaultStateFolder(t *testing.T) {
	o := testOptions(t)
	o.Run = fakeRun{home: true}
	o.DefaultHome = o.Home
	path := filepath.Join(t.TempDir(), "mcp.json")
	cfg := `{"mcpServers": {"old": {"command": "` + testSelf + `", "args": ["run", "--name", "old", "--", "npx", "old"]}}}`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r := Status([]File{{Client: "custom", Path: path, Shape: ShapeMCPServers}}, o)
	if len(r.Servers) != 1 || r.Servers[0].State != Protected {
		t.Errorf("status: %+v", r.Servers)
	}
}
