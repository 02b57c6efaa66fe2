package wire

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The npx form of a launch line, `npx -y mcpseal@VERSION run …`, is read
// like the binary's: status counts it, wrap keeps it (adding a missing
// --lock before the server command), unwrap restores the server. Status
// never counts it as protection: npx resolves mcpseal@VERSION from the
// folder the client starts it in first (a project's node_modules or
// .npmrc can supply another program), so it is baseline-outside; an npx
// launch without an exact version is broken.

func oneEntry(t *testing.T, entry string) File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"s": `+entry+`}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return File{Client: "custom", Path: path, Shape: ShapeMCPServers}
}

func TestStatusNPXLaunch(t *testing.T) {
	o := testOptions(t)
	for _, c := range []struct {
		name, entry string
		want        State
		lock        string
	}{
		{"pinned", `{"command": "npx", "args": ["-y", "mcpseal@0.3.0", "run", "--name", "m", "--", "npx", "-y", "@modelcontextprotocol/server-memory"]}`, BaselineOutside, ""},
		{"pinned with lock", `{"command": "npx", "args": ["--yes", "mcpseal@0.3.0", "run", "--lock", "/etc/l.lock", "--", "srv"]}`, BaselineOutside, "/etc/l.lock"},
		{"windows npx.cmd", `{"command": "C:\\Program Files\\nodejs\\npx.cmd", "args": ["-y", "mcpseal@0.3.0", "run", "--", "srv"]}`, BaselineOutside, ""},
		{"monitor", `{"command": "npx", "args": ["-y", "mcpseal@0.3.0", "run", "--posture", "monitor", "--", "srv"]}`, BaselineOutside, ""},
		{"UnpinnedNPXLatest", `{"command": "npx", "args": ["-y", "mcpseal@latest", "run", "--", "srv"]}`, Broken, ""},
		{"UnpinnedNPXNoVersion", `{"command": "npx", "args": ["-y", "mcpseal", "run", "--", "srv"]}`, Broken, ""},
		{"NPXPackageSwap", `{"command": "npx", "args": ["-y", "--package=evil@1.0.0", "mcpseal@0.3.0", "run", "--", "srv"]}`, Broken, ""},
		{"broken run line", `{"command": "npx", "args": ["-y", "mcpseal@0.3.0", "run", "--bogus", "--", "srv"]}`, Broken, ""},
		{"missing dash", `{"command": "npx", "args": ["-y", "mcpseal@0.3.0", "run", "srv"]}`, Broken, ""},
		{"not run", `{"command": "npx", "args": ["-y", "mcpseal@0.3.0", "demo"]}`, NotWrapped, ""},
		{"lookalike package", `{"command": "npx", "args": ["-y", "mcpseal-proxy@1.0.0", "run", "--", "srv"]}`, NotWrapped, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Status([]File{oneEntry(t, c.entry)}, o)
			if len(r.Servers) != 1 {
				t.Fatalf("%d servers", len(r.Servers))
			}
			if s := r.Servers[0]; s.State != c.want || s.Lock != c.lock {
				t.Errorf("state %s (lock %q, %s), want %s (lock %q)", s.State, s.Lock, s.Reason, c.want, c.lock)
			}
		})
	}
}

func TestWrapKeepsNPXLaunch(t *testing.T) {
	o := testOptions(t)
	f := oneEntry(t, `{"command": "npx", "args": ["-y", "mcpseal@0.3.0", "run", "--name", "m", "--", "node", "srv.js"]}`)
	p := PlanWrap([]File{f}, o, &Records{Version: recordsVersion})
	if c := p.Files[0].Changes[0]; c.Action != Keep {
		t.Errorf("wrap of a pinned npx launch: %s (%s)", c.Action, c.Reason)
	}
	o.Lock = "/etc/mcpseal.lock"
	p = PlanWrap([]File{f}, o, &Records{Version: recordsVersion})
	c := p.Files[0].Changes[0]
	want := []string{"npx", "-y", "mcpseal@0.3.0", "run", "--name", "m", "--lock", "/etc/mcpseal.lock", "--", "node", "srv.js"}
	if c.Action != Update || !slices.Equal(c.After, want) {
		t.Errorf("wrap --lock of an npx launch: %s %v, want Update %v", c.Action, c.After, want)
	}
	bad := oneEntry(t, `{"command": "npx", "args": ["-y", "mcpseal@latest", "run", "--", "node", "srv.js"]}`)
	if c := PlanWrap([]File{bad}, testOptions(t), &Records{Version: recordsVersion}).Files[0].Changes[0]; c.Action != Refuse {
		t.Errorf("wrap of an unpinned npx launch: %s (%s)", c.Action, c.Reason)
	}
}

func TestUnwrapNPXLaunch(t *testing.T) {
	for _, entry := range []string{
		`{"command": "npx", "args": ["-y", "mcpseal@0.3.0", "run", "--name", "m", "--", "node", "srv.js"]}`,
		`{"command": "npx", "args": ["-y", "mcpseal@latest", "run", "--", "node", "srv.js"]}`,
	} {
		f := oneEntry(t, entry)
		c := PlanUnwrap([]File{f}, testOptions(t), &Records{Version: recordsVersion}).Files[0].Changes[0]
		if c.Action != Unwrap || !slices.Equal(c.After, []string{"node", "srv.js"}) {
			t.Errorf("unwrap %s: %s %v (%s)", entry, c.Action, c.After, c.Reason)
		}
	}
}

// TestPolicyNPXForm: with PolicyOptions.NPX the policies launch mcpseal
// as npx -y mcpseal@VERSION, and every launch line they write is one
// status counts as protected.
func TestPolicyNPXForm(t *testing.T) {
	approved, err := ReadApproved(filepath.Join(testdata, "policy", "approved.json"))
	if err != nil {
		t.Fatal(err)
	}
	o := PolicyOptions{NPX: "0.3.0", Lock: "/etc/mcpseal/mcpseal.lock"}
	for _, p := range Products {
		files, err := Policies(p, approved, o)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for name, data := range files {
			golden(t, "policy-npx/"+p+"/"+name, data)
		}
	}
	files, _ := Policies("claude-code", approved, o)
	path := filepath.Join(t.TempDir(), "managed-mcp.json")
	if err := os.WriteFile(path, files["managed-mcp.json"], 0o600); err != nil {
		t.Fatal(err)
	}
	r := Status([]File{{Client: "claude-code", Path: path, Shape: ShapeMCPServers}}, testOptions(t))
	if len(r.Servers) != len(approved) {
		t.Fatalf("%d servers in the policy, %d approved", len(r.Servers), len(approved))
	}
	for _, s := range r.Servers {
		if s.State != BaselineOutside || s.Lock != o.Lock {
			t.Errorf("%s: %s (%s), lock %q", s.Name, s.State, s.Reason, s.Lock)
		}
	}
	for _, v := range []string{"latest", "^0.3.0", "0.3", "v0.3.0"} {
		if _, err := Policies("claude-code", approved, PolicyOptions{NPX: v}); err == nil {
			t.Errorf("npx version %q accepted", v)
		}
	}
	// An approved list that already names mcpseal through npx is refused:
	// policy wraps the originals.
	list := filepath.Join(t.TempDir(), "approved.json")
	os.WriteFile(list, []byte(`{"mcpServers": {"m": {"command": "npx", "args": ["-y", "mcpseal@0.3.0", "run", "--", "srv"]}}}`), 0o600)
	if _, err := ReadApproved(list); err == nil {
		t.Error("an approved server already wrapped through npx was accepted")
	}
}
