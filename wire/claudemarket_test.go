package wire

import (
	"path/filepath"
	"strings"
	"testing"
)

// marketHome is a home with the plugins a@local and b@local of a
// directory marketplace whose marketplace.json is market; neither plugin
// has a plugin.json, so their entries are their manifests.
func marketHome(t *testing.T, market string) (home, path string) {
	t.Helper()
	root := t.TempDir()
	home = filepath.Join(root, "home")
	c := filepath.Join(home, ".claude")
	mkt := filepath.Join(root, "src", "mkt")
	path = filepath.Join(mkt, ".claude-plugin", "marketplace.json")
	writeFiles(t, map[string]string{
		filepath.Join(c, "settings.json"): `{"enabledPlugins": {"a@local": true, "b@local": false}}`,
		filepath.Join(c, "plugins", "installed_plugins.json"): `{"version": 2, "plugins": {
			"a@local": [{"scope": "user", "installPath": "` + filepath.Join(c, "plugins", "cache", "local", "a", "unknown") + `"}],
			"b@local": [{"scope": "user", "installPath": "` + filepath.Join(c, "plugins", "cache", "local", "b", "unknown") + `"}]}}`,
		filepath.Join(c, "plugins", "known_marketplaces.json"): `{"local": {"source": {"source": "directory", "path": "` + mkt + `"}, "installLocation": "` + mkt + `"}}`,
		path:                                 market,
		filepath.Join(mkt, "a", "README.md"): "a\n",
		filepath.Join(mkt, "b", "README.md"): "b\n",
		filepath.Join(mkt, "b", "more.json"): `{"mcpServers": {"bpath": {"command": "/bin/echo"}}}`,
	})
	return home, path
}

// TestMarketplaceEntriesOfTwoPlugins: one marketplace.json defines the
// servers of two installed plugins, inline and by path. Status names each
// server with its own plugin (and b's as disabled); wrap edits the file
// once and gives each server its plugin's name.
func TestMarketplaceEntriesOfTwoPlugins(t *testing.T) {
	home, path := marketHome(t, `{"name": "local", "plugins": [
		{"name": "a", "source": "./a", "mcpServers": {"x": {"command": "npx", "args": ["x"]}, "y": {"url": "https://y.example/mcp"}}},
		{"name": "b", "source": "./b", "strict": false, "mcpServers": {"z": {"command": "npx", "args": ["z"]}}},
		{"name": "uninstalled", "source": "./u", "mcpServers": {"u": {"command": "npx"}}}]}`)
	o := testOptions(t)
	o.DefaultHome = o.Home
	files := Existing(LoadedFiles(Env{GOOS: "linux", Home: home}))
	r := Status(files, o)
	got := servers(r)
	for _, k := range []string{"plugin a@local/x", "plugin a@local/y", "plugin b@local/z"} {
		if got[k].State != NotWrapped || got[k].File != path {
			t.Errorf("%s: %+v", k, got[k])
		}
	}
	if len(got) != 3 || !got["plugin b@local/z"].Disabled || got["plugin a@local/x"].Disabled || r.Enforcing() {
		t.Fatalf("want a's x and y, b's z (disabled), nothing of the plugin not installed: %+v", r.Servers)
	}
	if _, err := PlanWrap(files, o, &Records{Version: recordsVersion}).Apply(); err != nil {
		t.Fatal(err)
	}
	after := readTestFile(t, path)
	for _, n := range []string{`"plugin:a:x"`, `"plugin:b:z"`} {
		if !strings.Contains(after, n) {
			t.Errorf("wrap does not name %s:\n%s", n, after)
		}
	}
	if strings.Contains(after, `"--", "npx"]}}}]}`) {
		t.Errorf("wrap edited the plugin that is not installed:\n%s", after)
	}
}

// TestRedTeamAmbiguousMarketplaceEntryIsUnreadable: a marketplace.json
// that hides a plugin's servers behind a form Claude Code and mcpseal
// could read differently (the plugin listed twice, a repeated key, a
// server list of the wrong type, bad JSON) is an unreadable file: status
// exits 1, never "no servers".
func TestRedTeamAmbiguousMarketplaceEntryIsUnreadable(t *testing.T) {
	// Each case is the entries of plugin a; b's is well formed.
	for name, a := range map[string]string{
		"plugin listed twice":     `{"name": "a", "source": "./a"}, {"name": "a", "source": "./a", "mcpServers": {"x": {"command": "npx"}}}`,
		"mcpServers twice":        `{"name": "a", "source": "./a", "mcpServers": {}, "mcpServers": {"x": {"command": "npx"}}}`,
		"server named twice":      `{"name": "a", "source": "./a", "mcpServers": {"x": {"command": "/bin/echo"}, "x": {"command": "npx"}}}`,
		"mcpServers a number":     `{"name": "a", "source": "./a", "mcpServers": 1}`,
		"a path list with object": `{"name": "a", "source": "./a", "mcpServers": [{"x": {"command": "npx"}}]}`,
		"name not a string":       `{"name": 1, "source": "./a"}, {"name": "a", "source": "./a"}`,
		"not JSON":                `{"name": "a", "source": "./a", "mcpServers": {"x": `,
	} {
		market := `{"plugins": [{"name": "b", "source": "./b", "mcpServers": "./more.json"}, ` + a + `]}`
		t.Run(name, func(t *testing.T) {
			home, _ := marketHome(t, market)
			r := Status(Existing(LoadedFiles(Env{GOOS: "linux", Home: home})), testOptions(t))
			unreadable := 0
			for _, f := range r.Files {
				if f.Error != "" {
					unreadable++
				}
			}
			if unreadable == 0 || r.Enforcing() {
				t.Fatalf("no unreadable file (enforcing %v): %+v %+v", r.Enforcing(), r.Files, r.Servers)
			}
		})
	}
}

// TestMarketplaceEntryNamesAServerFile: an entry's mcpServers may be a
// path, read from the plugin's folder as Claude Code reads it (checked
// with 2.1.328): that file's servers are the plugin's, wrapped in place.
func TestMarketplaceEntryNamesAServerFile(t *testing.T) {
	home, path := marketHome(t, `{"plugins": [{"name": "a", "source": "./a"}, {"name": "b", "source": "./b", "mcpServers": "./more.json"}]}`)
	o := testOptions(t)
	r := Status(Existing(LoadedFiles(Env{GOOS: "linux", Home: home})), o)
	s := servers(r)["plugin b@local/bpath"]
	want := filepath.Join(filepath.Dir(filepath.Dir(path)), "b", "more.json")
	if s.State != NotWrapped || s.File != want || s.Reason != "launched without mcpseal" || len(r.Servers) != 1 {
		t.Fatalf("want b's bpath from %s, wrappable: %+v", want, r.Servers)
	}
}

// TestMarketplaceDeclaredNowhereIsUnreadable: an installed plugin with no
// plugin.json whose marketplace neither known_marketplaces.json nor
// settings.json declares: mcpseal cannot find its entry, and says so
// rather than reading no servers.
func TestMarketplaceDeclaredNowhereIsUnreadable(t *testing.T) {
	home, _ := marketHome(t, `{"name": "local", "plugins": [{"name": "a", "source": "./a", "mcpServers": {"x": {"command": "npx"}}}, {"name": "b", "source": "./b"}]}`)
	writeFiles(t, map[string]string{filepath.Join(home, ".claude", "plugins", "known_marketplaces.json"): `{}`})
	r := Status(Existing(LoadedFiles(Env{GOOS: "linux", Home: home})), testOptions(t))
	unreadable := 0
	for _, f := range r.Files {
		if f.Error != "" {
			unreadable++
		}
	}
	if r.Enforcing() || unreadable == 0 {
		t.Fatalf("an unknown marketplace's entry reads as no servers: %+v %+v", r.Files, r.Servers)
	}
}
