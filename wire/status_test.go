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
		{"strict", `{"command": "` + testSelf + `", "args": ["run", "--posture", "strict", "--", "npx", "srv"]}`, Protected, ""},
		{"nameless wrapped elsewhere", `{"command": "` + testSelf + `", "args": ["run", "--", "npx", "srv"]}`, Protected, ""},
		{"locked", `{"command": "` + testSelf + `", "args": ["run", "--lock", "/etc/mcpseal.lock", "--", "npx"]}`, Protected, "/etc/mcpseal.lock"},
		{"monitor", `{"command": "` + testSelf + `", "args": ["run", "--posture", "monitor", "--", "npx"]}`, MonitorOnly, ""},
		{"unknown flag", `{"command": "` + testSelf + `", "args": ["run", "--bogus", "--", "npx"]}`, Broken, ""},
		{"missing dash", `{"command": "` + testSelf + `", "args": ["run", "--name", "x", "npx"]}`, Broken, ""},
		{"bad posture", `{"command": "` + testSelf + `", "args": ["run", "--posture", "lenient", "--", "npx"]}`, Broken, ""},
		{"no command", `{"command": "` + testSelf + `", "args": ["run", "--name", "x", "--"]}`, Broken, ""},
		{"binary gone", `{"command": ` + jsonString(gone) + `, "args": ["run", "--", "npx"]}`, Broken, ""},
		{"pins elsewhere", `{"command": "` + testSelf + `", "args": ["run", "--", "npx"], "env": {"MCPSEAL_HOME": "/tmp/elsewhere"}}`, BaselineOutside, ""},
		{"pins here", `{"command": "` + testSelf + `", "args": ["run", "--", "npx"], "env": {"MCPSEAL_HOME": ` + jsonString(o.Home) + `}}`, Protected, ""},
		{"mcpseal but not run", `{"command": "` + testSelf + `", "args": ["lookup"]}`, NotWrapped, ""},
		{"bare mcpseal not on PATH", `{"command": "mcpseal", "args": ["run", "--", "npx"]}`, NotWrapped, ""},
		{"relative mcpseal", `{"command": "bin/mcpseal", "args": ["run", "--", "npx"]}`, NotWrapped, ""},
		{"bare mcpseal on the entry's PATH", `{"command": "mcpseal", "args": ["run", "--", "npx"], "env": {"PATH": "/tmp/evil"}}`, NotWrapped, ""},
		{"HOME moves the pins", `{"command": "` + testSelf + `", "args": ["run", "--", "npx"], "env": {"HOME": "/tmp/elsewhere"}}`, BaselineOutside, ""},
		{"other trusted keys", `{"command": "` + testSelf + `", "args": ["run", "--", "npx"], "env": {"MCPSEAL_LOCK_HOST_CONFIG": "/tmp/keys.json"}}`, BaselineOutside, ""},
		{"other registry", `{"command": "` + testSelf + `", "args": ["run", "--", "npx"], "env": {"MCPSEAL_NPM_REGISTRY": "https://evil.example/"}}`, BaselineOutside, ""},
		{"remote", `{"url": "https://x.example/mcp"}`, NotWrapped, ""},
		{"remote wrapped", `{"command": "` + testSelf + `", "args": ["run", "--url", "https://x.example/mcp", "--name", "x"]}`, Protected, ""},
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

// TestAnotherFileNamedMcpsealIsNotProtected: a project or a plugin may
// ship its own file called mcpseal; a line that starts it is not
// protection. This binary by another path (a link, a copy) is.
func TestAnotherFileNamedMcpsealIsNotProtected(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "bin", "mcpseal")
	impostor := filepath.Join(dir, "repo", "bin", "mcpseal")
	copied := filepath.Join(dir, "copy", "mcpseal")
	link := filepath.Join(dir, "link", "mcpseal")
	for p, data := range map[string]string{self: "#!/bin/sh\n# the real one\n", impostor: "#!/bin/sh\nexec \"$@\"\n", copied: "#!/bin/sh\n# the real one\n"} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t)
	o.Self = self
	for cmd, want := range map[string]State{self: Protected, link: Protected, copied: Protected, impostor: NotWrapped} {
		path := filepath.Join(t.TempDir(), "mcp.json")
		os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": "`+cmd+`", "args": ["run", "--name", "a", "--", "npx"]}}}`), 0o600)
		r := Status([]File{{Client: "custom", Path: path, Shape: ShapeMCPServers}}, o)
		if len(r.Servers) != 1 || r.Servers[0].State != want {
			t.Errorf("%s: %+v, want %s", cmd, r.Servers, want)
		}
	}
	// Wrap points the impostor's line at this binary.
	path := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": "`+impostor+`", "args": ["run", "--name", "a", "--", "npx"]}}}`), 0o600)
	files := []File{{Client: "custom", Path: path, Shape: ShapeMCPServers}}
	if _, err := PlanWrap(files, o, &Records{Version: recordsVersion}).Apply(); err != nil {
		t.Fatal(err)
	}
	if r := Status(files, o); r.Servers[0].State != Protected {
		t.Errorf("after wrap: %+v", r.Servers)
	}
}
