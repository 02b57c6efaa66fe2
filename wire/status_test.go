package wire

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestStatusBeforeAndAfterWrap: golden reports for the fake HOME, before
// and after wrap.
func TestStatusBeforeAndAfterWrap(t *testing.T) {
	home := copyHome(t)
	o := testOptions(t)
	files := homeFiles(home, true)
	report := func(name string) *Report {
		r := Status(files, o)
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden(t, name, append(data, '\n'), home, "@HOME@", o.Home, "@MCPSEAL_HOME@")
		return r
	}
	if r := report("status-before.json"); r.Enforcing() {
		t.Error("an unwrapped machine reports enforcing")
	}
	if _, err := PlanWrap(files, o, &Records{Version: recordsVersion}).Apply(); err != nil {
		t.Fatal(err)
	}
	r := report("status-after.json")
	if r.Enforcing() {
		t.Error("enforcing reported with refused remote entries and an invalid file")
	}
	n := map[State]int{}
	for _, s := range r.Servers {
		n[s.State]++
	}
	// 26 servers; 22 wrapped; the Zed extension, two refused VS Code
	// remotes and Codex's env-credential remote are not.
	if n[Protected] != 22 || n[NotWrapped] != 4 || len(r.Servers) != 26 {
		t.Errorf("states %v over %d servers", n, len(r.Servers))
	}
}

// TestStatusStates is a table of launch lines and what status makes of
// them.
func TestStatusStates(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(t)
	gone := filepath.Join(dir, "gone", "mcpseal")
	cases := []struct {
		name, entry string
		want        State
		lock        string
	}{
		{"plain", `{"command": "npx", "args": ["srv"]}`, NotWrapped, ""},
		{"guard", `{"command": "` + testSelf + `", "args": ["run", "--name", "x", "--", "npx", "srv"]}`, Protected, ""},
		{"strict", `{"command": "mcpseal", "args": ["run", "--posture", "strict", "--", "npx", "srv"]}`, Protected, ""},
		{"nameless wrapped elsewhere", `{"command": "mcpseal", "args": ["run", "--", "npx", "srv"]}`, Protected, ""},
		{"locked", `{"command": "mcpseal", "args": ["run", "--lock", "/etc/mcpseal.lock", "--", "npx"]}`, Protected, "/etc/mcpseal.lock"},
		{"monitor", `{"command": "mcpseal", "args": ["run", "--posture", "monitor", "--", "npx"]}`, MonitorOnly, ""},
		{"unknown flag", `{"command": "mcpseal", "args": ["run", "--bogus", "--", "npx"]}`, Broken, ""},
		{"missing dash", `{"command": "mcpseal", "args": ["run", "--name", "x", "npx"]}`, Broken, ""},
		{"bad posture", `{"command": "mcpseal", "args": ["run", "--posture", "lenient", "--", "npx"]}`, Broken, ""},
		{"no command", `{"command": "mcpseal", "args": ["run", "--name", "x", "--"]}`, Broken, ""},
		{"binary gone", `{"command": ` + jsonString(gone) + `, "args": ["run", "--", "npx"]}`, Broken, ""},
		{"pins elsewhere", `{"command": "mcpseal", "args": ["run", "--", "npx"], "env": {"MCPSEAL_HOME": "/tmp/elsewhere"}}`, BaselineOutside, ""},
		{"pins here", `{"command": "mcpseal", "args": ["run", "--", "npx"], "env": {"MCPSEAL_HOME": ` + jsonString(o.Home) + `}}`, Protected, ""},
		{"mcpseal but not run", `{"command": "mcpseal", "args": ["lookup"]}`, NotWrapped, ""},
		{"remote", `{"url": "https://x.example/mcp"}`, NotWrapped, ""},
		{"remote wrapped", `{"command": "mcpseal", "args": ["run", "--url", "https://x.example/mcp", "--name", "x"]}`, Protected, ""},
		{"not an object", `"npx"`, NotWrapped, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".json")
			if err := os.WriteFile(path, []byte(`{"mcpServers": {"s": `+c.entry+`}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			r := Status([]File{{Client: "custom", Path: path, Shape: ShapeMCPServers}}, o)
			if len(r.Servers) != 1 {
				t.Fatalf("%d servers", len(r.Servers))
			}
			s := r.Servers[0]
			if s.State != c.want || s.Lock != c.lock {
				t.Errorf("state %s (lock %q, %s), want %s (lock %q)", s.State, s.Lock, s.Reason, c.want, c.lock)
			}
			if r.Enforcing() != (c.want == Protected) {
				t.Errorf("Enforcing() = %v", r.Enforcing())
			}
		})
	}
}

// TestStatusReportsUnreadableFile: an invalid file is reported and makes
// the machine not enforcing.
func TestStatusReportsUnreadableFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": "mcpseal" "args": []}}}`), 0o600)
	r := Status([]File{{Client: "custom", Path: path, Shape: ShapeMCPServers}}, testOptions(t))
	if len(r.Files) != 1 || r.Files[0].Error == "" || r.Enforcing() {
		t.Errorf("report %+v", r)
	}
}
