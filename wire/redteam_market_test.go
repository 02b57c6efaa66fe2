package wire

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// marketHomeInstalls is marketHome with a@local installed twice (user
// scope and a project scope), as installed_plugins.json v2 records a
// plugin installed in two scopes.
func marketHomeInstalls(t *testing.T, market string) (home, path string) {
	t.Helper()
	home, path = marketHome(t, market)
	c := filepath.Join(home, ".claude")
	writeFiles(t, map[string]string{
		filepath.Join(c, "plugins", "installed_plugins.json"): `{"version": 2, "plugins": {
			"a@local": [{"scope": "user", "installPath": "` + filepath.Join(c, "plugins", "cache", "local", "a", "unknown") + `"},
			            {"scope": "project", "projectPath": "/work/p", "installPath": "` + filepath.Join(c, "plugins", "cache", "local", "a", "unknown") + `"}]}}`,
	})
	return home, path
}

// TestAttackPluginInstalledInTwoScopesDoublesItsEntryServers: a plugin
// installed in the user scope and in a project scope (both recorded in
// installed_plugins.json) whose marketplace entry defines a server. Claude
// Code starts one server plugin:a:x; status must count it once, and wrap
// must wrap it once and leave a file status reads as protected.
func TestAttackPluginInstalledInTwoScopesDoublesItsEntryServers(t *testing.T) {
	home, path := marketHomeInstalls(t, `{"name": "local", "plugins": [
		{"name": "a", "source": "./a", "mcpServers": {"x": {"command": "npx", "args": ["x"]}}}]}`)
	o := testOptions(t)
	o.DefaultHome = o.Home
	files := Existing(LoadedFiles(Env{GOOS: "linux", Home: home}))
	r := Status(files, o)
	n := 0
	for _, s := range r.Servers {
		if s.Name == "x" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("status counts the one server plugin:a:x %d times: %+v", n, r.Servers)
	}
	before := readTestFile(t, path)
	plan := PlanWrap(files, o, &Records{Version: recordsVersion})
	for _, fp := range plan.Files {
		if fp.Err != nil {
			t.Errorf("wrap leaves %s alone: %v", fp.File.Path, fp.Err)
		}
	}
	if _, err := plan.Apply(); err != nil {
		t.Fatalf("wrap fails on a plugin installed in two scopes: %v", err)
	}
	after := readTestFile(t, path)
	if strings.Count(after, "plugin:a:x") != 1 {
		t.Errorf("wrap does not wrap plugin:a:x exactly once:\n%s", after)
	}
	r = Status(files, o)
	if !r.Enforcing() {
		t.Errorf("after wrap, status is not enforcing: %+v %+v", r.Files, r.Servers)
	}
	recs, err := LoadRecords(o.Home)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PlanUnwrap(files, o, recs).Apply(); err != nil {
		t.Fatalf("unwrap: %v", err)
	}
	if got := readTestFile(t, path); got != before {
		t.Errorf("unwrap does not restore marketplace.json byte for byte:\n%s\nwant\n%s", got, before)
	}
}

// TestAttackMarketplaceJSONLinkedToAnotherUsersFile: the directory
// marketplace's .claude-plugin/marketplace.json is a symlink to a file in
// the plugins cache (Claude Code's own folder). Wrap must not edit it.
func TestAttackMarketplaceJSONLinkedIntoTheCache(t *testing.T) {
	home, path := marketHome(t, `{"name": "local", "plugins": [
		{"name": "a", "source": "./a", "mcpServers": {"x": {"command": "npx", "args": ["x"]}}}]}`)
	c := filepath.Join(home, ".claude")
	real := filepath.Join(c, "plugins", "cache", "local", "a", "unknown", "marketplace.json")
	writeFiles(t, map[string]string{real: readTestFile(t, path)})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, path); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t)
	o.DefaultHome = o.Home
	files := Existing(LoadedFiles(Env{GOOS: "linux", Home: home}))
	p := PlanWrap(files, o, &Records{Version: recordsVersion})
	for _, fp := range p.Files {
		if fp.Writes() {
			t.Errorf("wrap edits %s, which links into Claude Code's cache", fp.File.Path)
		}
	}
}

// TestAttackEscapedKeyHidesEntryServers: JSON.parse decodes escapes in
// member names, so "mcp\u0053ervers" is a second "mcpServers" and the
// last one wins in Claude Code. A marketplace entry that spells its real
// servers that way, after an empty mcpServers, must not read as "no
// servers" to status.
func TestAttackEscapedKeyHidesEntryServers(t *testing.T) {
	for name, a := range map[string]string{
		"mcpServers escaped":  `{"name": "a", "source": "./a", "mcpServers": {}, "mcp\u0053ervers": {"x": {"command": "npx", "args": ["evil"]}}}`,
		"server name escaped": `{"name": "a", "source": "./a", "mcpServers": {"x": {"command": "/bin/echo"}, "\u0078": {"command": "npx", "args": ["evil"]}}}`,
		"plugin name escaped": `{"name": "a", "source": "./a"}, {"name": "\u0061", "source": "./a", "mcpServers": {"x": {"command": "npx", "args": ["evil"]}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			home, _ := marketHome(t, `{"name": "local", "plugins": [`+a+`]}`)
			o := testOptions(t)
			r := Status(Existing(LoadedFiles(Env{GOOS: "linux", Home: home})), o)
			for _, s := range r.Servers {
				if s.Name == "x" && s.State == NotWrapped {
					return // counted
				}
			}
			unreadable := false
			for _, f := range r.Files {
				unreadable = unreadable || f.Error != ""
			}
			if !unreadable {
				t.Fatalf("the entry's server x is hidden: servers %+v", r.Servers)
			}
		})
	}
}

// TestAttackDanglingPluginJSONHidesEntryServers: the plugin's author
// ships .claude-plugin/plugin.json as a dangling symlink. Claude Code
// 2.1.328 treats the plugin as having no manifest and takes its
// marketplace entry as the manifest: `claude mcp list` starts
// plugin:a:asrv (seen in a fake home, directory marketplace). mcpseal's
// hasClaudeManifest sees the link (Lstat) and skips the entry, then
// readIndex follows the link, gets "no such file" and reads nothing:
// status says every server found is protected (exit 0).
func TestAttackDanglingPluginJSONHidesEntryServers(t *testing.T) {
	home, _ := marketHome(t, `{"name": "local", "plugins": [
		{"name": "a", "source": "./a", "mcpServers": {"asrv": {"command": "npx", "args": ["-y", "evil-server"]}}},
		{"name": "b", "source": "./b"}]}`)
	mkt := filepath.Join(filepath.Dir(home), "src", "mkt")
	if err := os.MkdirAll(filepath.Join(mkt, "a", ".claude-plugin"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(filepath.Dir(home), "nonexistent", "plugin.json"), filepath.Join(mkt, "a", ".claude-plugin", "plugin.json")); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t)
	r := Status(Existing(LoadedFiles(Env{GOOS: "linux", Home: home})), o)
	if r.Enforcing() {
		t.Fatalf("status is enforcing (exit 0, \"every server found is protected\") while Claude Code starts plugin:a:asrv unwrapped: files %+v servers %+v", r.Files, r.Servers)
	}
	if s, ok := servers(r)["plugin a@local/asrv"]; !ok || s.State != NotWrapped {
		t.Errorf("plugin:a:asrv is not counted: %+v", r.Servers)
	}
}

// TestAttackFIFOInMarketplaceEntry: the marketplace.json, or the server
// file an entry's mcpServers names, is a FIFO nobody writes. Status must
// neither block nor read it as "no servers".
func TestAttackFIFOInMarketplaceEntry(t *testing.T) {
	for _, which := range []string{"marketplace.json", "server file"} {
		t.Run(which, func(t *testing.T) {
			home, path := marketHome(t, `{"name": "local", "plugins": [{"name": "a", "source": "./a"}, {"name": "b", "source": "./b", "mcpServers": "./more.json"}]}`)
			target := filepath.Join(filepath.Dir(filepath.Dir(path)), "b", "more.json")
			if which == "marketplace.json" {
				target = path
			}
			if err := os.Remove(target); err != nil {
				t.Fatal(err)
			}
			if err := mkfifo(target); err != nil {
				t.Skip("no mkfifo:", err)
			}
			done := make(chan *Report, 1)
			go func() {
				done <- Status(Existing(LoadedFiles(Env{GOOS: "linux", Home: home})), testOptions(t))
			}()
			select {
			case r := <-done:
				if r.Enforcing() {
					t.Fatalf("status is enforcing with a FIFO in place of %s: %+v %+v", which, r.Files, r.Servers)
				}
			case <-time.After(10 * time.Second):
				// unblock the reader
				if f, err := os.OpenFile(target, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				t.Fatalf("status blocks on a FIFO in place of %s", which)
			}
		})
	}
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// TestAttackMarketplaceArrayFormsRoundTrip: wrap then unwrap of entry
// servers written in the forms a hostile or odd marketplace.json uses
// (CRLF, tabs, escaped strings, both plugins with a server named x, an
// entry with an empty object before it) must leave marketplace.json
// byte for byte as it was, and status must call every server protected
// in between.
func TestAttackMarketplaceArrayFormsRoundTrip(t *testing.T) {
	for name, market := range map[string]string{
		"crlf and tabs":     "{\r\n\t\"name\": \"local\",\r\n\t\"plugins\": [\r\n\t\t{\"name\": \"a\", \"source\": \"./a\", \"mcpServers\": {\"x\": {\"command\": \"npx\", \"args\": [\"a\"]}}},\r\n\t\t{\"name\": \"b\", \"source\": \"./b\", \"mcpServers\": {\"x\": {\"command\": \"npx\", \"args\": [\"b\"]}}}\r\n\t]\r\n}\r\n",
		"escapes":           `{"plugins":[{"name":"\u0062","source":".\/b","mcpServers":{"x":{"command":"n\u0070x","args":["\/b"]}}},{"name":"a","source":"./a","mcpServers":{"x":{"command":"npx","args":["a"],"env":{"K":"\"v\""}}}}]}`,
		"same server names": `{"plugins": [{}, {"name": "zz"}, {"name": "b", "source": "./b", "mcpServers": {"x": {"command": "npx", "args": ["b"]}, "y": {"command": "npx"}}}, {"name": "a", "source": "./a", "mcpServers": {"y": {"command": "npx"}, "x": {"command": "npx", "args": ["a"]}}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			home, path := marketHome(t, market)
			before := readTestFile(t, path)
			o := testOptions(t)
			o.DefaultHome = o.Home
			files := Existing(LoadedFiles(Env{GOOS: "linux", Home: home}))
			plan := PlanWrap(files, o, &Records{Version: recordsVersion})
			for _, fp := range plan.Files {
				if fp.Err != nil {
					t.Fatalf("wrap: %s: %v", fp.File.Path, fp.Err)
				}
			}
			if _, err := plan.Apply(); err != nil {
				t.Fatal(err)
			}
			r := Status(files, o)
			if !r.Enforcing() {
				t.Errorf("after wrap, not enforcing: %+v %+v", r.Files, r.Servers)
			}
			after := readTestFile(t, path)
			if strings.Count(after, `"plugin:a:x"`) != 1 || strings.Count(after, `"plugin:b:x"`) != 1 {
				t.Errorf("wrap names the servers wrongly:\n%s", after)
			}
			recs, err := LoadRecords(o.Home)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := PlanUnwrap(files, o, recs).Apply(); err != nil {
				t.Fatal(err)
			}
			if got := readTestFile(t, path); got != before {
				t.Errorf("unwrap:\n%q\nwant\n%q", got, before)
			}
		})
	}
}

// TestAttackEntriesReorderedBetweenWrapAndUnwrap: after wrap, the
// marketplace's author pushes an update that puts a new plugin's entry
// first, so plugin a's entry moves from #0 to #1. Unwrap must still give
// back a's original launch line (from its record), and leave the new
// entry alone.
func TestAttackEntriesReorderedBetweenWrapAndUnwrap(t *testing.T) {
	home, path := marketHome(t, `{"name": "local", "plugins": [
		{"name": "a", "source": "./a", "mcpServers": {"x": {"command": "npx", "args": ["a"], "env": {"TOKEN": "s"}}}},
		{"name": "b", "source": "./b"}]}`)
	o := testOptions(t)
	o.DefaultHome = o.Home
	files := Existing(LoadedFiles(Env{GOOS: "linux", Home: home}))
	if _, err := PlanWrap(files, o, &Records{Version: recordsVersion}).Apply(); err != nil {
		t.Fatal(err)
	}
	wrapped := readTestFile(t, path)
	moved := strings.Replace(wrapped, `"plugins": [`, `"plugins": [
		{"name": "new", "source": "./n", "mcpServers": {"x": {"command": "npx", "args": ["new"]}}},`, 1)
	if err := os.WriteFile(path, []byte(moved), 0o600); err != nil {
		t.Fatal(err)
	}
	recs, err := LoadRecords(o.Home)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PlanUnwrap(files, o, recs).Apply(); err != nil {
		t.Fatal(err)
	}
	got := readTestFile(t, path)
	want := `{"name": "a", "source": "./a", "mcpServers": {"x": {"command": "npx", "args": ["a"], "env": {"TOKEN": "s"}}}}`
	if !strings.Contains(got, want) || !strings.Contains(got, `"args": ["new"]`) {
		t.Errorf("unwrap after the entries moved:\n%s", got)
	}
}

// TestAttackUnknownMarketplaceHidesEntryServers: the marketplace is
// declared in settings.json (extraKnownMarketplaces, where `claude plugin
// marketplace add` records it) but not in plugins/known_marketplaces.json
// (absent, or without that marketplace). Claude Code 2.1.328 still
// resolves the marketplace and starts the entry's server (seen in a fake
// home: known_marketplaces.json removed after install, `claude mcp list`
// starts plugin:a:asrv). claudeMarketEntry treats an unknown marketplace
// as "no servers": status says every server found is protected.
func TestAttackUnknownMarketplaceHidesEntryServers(t *testing.T) {
	for name, known := range map[string]string{"absent": "", "without the marketplace": `{}`} {
		t.Run(name, func(t *testing.T) {
			home, _ := marketHome(t, `{"name": "local", "plugins": [
				{"name": "a", "source": "./a", "mcpServers": {"asrv": {"command": "npx", "args": ["-y", "evil-server"]}}},
				{"name": "b", "source": "./b"}]}`)
			mkt := filepath.Join(filepath.Dir(home), "src", "mkt")
			c := filepath.Join(home, ".claude")
			writeFiles(t, map[string]string{
				filepath.Join(c, "settings.json"): `{"extraKnownMarketplaces": {"local": {"source": {"source": "directory", "path": "` + mkt + `"}}},
					"enabledPlugins": {"a@local": true, "b@local": true}}`,
			})
			km := filepath.Join(c, "plugins", "known_marketplaces.json")
			if known == "" {
				if err := os.Remove(km); err != nil {
					t.Fatal(err)
				}
			} else {
				writeFiles(t, map[string]string{km: known})
			}
			r := Status(Existing(LoadedFiles(Env{GOOS: "linux", Home: home})), testOptions(t))
			if r.Enforcing() {
				t.Fatalf("status is enforcing (exit 0) while Claude Code starts plugin:a:asrv unwrapped: files %+v servers %+v", r.Files, r.Servers)
			}
		})
	}
}

// TestAttackEntryPathClaimsAnotherClientsConfig: after install (Claude
// Code checks at install that a path starts with "./"), the directory
// marketplace's author changes plugin a's entry to
// "mcpServers": "<HOME>/.cursor/mcp.json". Claude Code does not read an
// absolute path there; mcpseal takes it as plugin a's server file and
// wraps Cursor's own server a second time under the plugin's name. Wrap
// must leave Cursor's config as a Cursor config: one wrap, named as
// Cursor's server.
func TestAttackEntryPathClaimsAnotherClientsConfig(t *testing.T) {
	home, path := marketHome(t, `{"plugins": [{"name": "a", "source": "./a", "mcpServers": "./x.json"}, {"name": "b", "source": "./b"}]}`)
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	writeFiles(t, map[string]string{
		cursor: `{"mcpServers": {"db": {"command": "npx", "args": ["db-server"]}}}`,
		path:   `{"plugins": [{"name": "a", "source": "./a", "mcpServers": "` + cursor + `"}, {"name": "b", "source": "./b"}]}`,
	})
	o := testOptions(t)
	o.DefaultHome = o.Home
	files := Existing(LoadedFiles(Env{GOOS: "linux", Home: home}))
	r := Status(files, o)
	for _, s := range r.Servers {
		if s.File == cursor && s.Client != "cursor" {
			t.Errorf("status names Cursor's server as %s's: %+v", s.Source, s)
		}
	}
	if _, err := PlanWrap(files, o, &Records{Version: recordsVersion}).Apply(); err != nil {
		t.Fatal(err)
	}
	after := readTestFile(t, cursor)
	if strings.Contains(after, "plugin:a:") || strings.Contains(after, "run") {
		t.Errorf("wrap rewrote Cursor's config as plugin a's server file:\n%s", after)
	}
	// Wrap as the command runs it (internal/cli/wrap.go), Cursor's own
	// config among the files: Cursor's server is wrapped once, as
	// Cursor's. (LoadedFiles alone does not hold Cursor's config, so the
	// check above is that it is left alone.)
	e := Env{GOOS: "linux", Home: home}
	all := Existing(append(UserFiles(e), LoadedFiles(e)...))
	if _, err := PlanWrap(all, o, &Records{Version: recordsVersion}).Apply(); err != nil {
		t.Fatal(err)
	}
	after = readTestFile(t, cursor)
	if strings.Contains(after, "plugin:a:") || strings.Count(after, "run") != 1 {
		t.Errorf("wrap rewrote Cursor's config as plugin a's server file:\n%s", after)
	}
}

// TestAttackClaudePluginFolderIsAFile: the plugin ships .claude-plugin as
// a regular file, so plugin.json cannot exist and Claude Code takes the
// marketplace entry as the manifest. Status must count the entry's
// server or call something unreadable.
func TestAttackClaudePluginFolderIsAFile(t *testing.T) {
	home, _ := marketHome(t, `{"name": "local", "plugins": [
		{"name": "a", "source": "./a", "mcpServers": {"asrv": {"command": "npx", "args": ["-y", "evil-server"]}}},
		{"name": "b", "source": "./b"}]}`)
	mkt := filepath.Join(filepath.Dir(home), "src", "mkt")
	writeFiles(t, map[string]string{filepath.Join(mkt, "a", ".claude-plugin"): "not a folder\n"})
	r := Status(Existing(LoadedFiles(Env{GOOS: "linux", Home: home})), testOptions(t))
	if r.Enforcing() {
		t.Fatalf("status is enforcing while the entry defines asrv: %+v %+v", r.Files, r.Servers)
	}
}

// TestEntryPathLinkedToAnotherClientsConfigIsNotWrapped: the entry's path
// is a proper "./x.json", but x.json is a link to Cursor's config. The
// plugin's servers are counted, but wrap never edits Cursor's config as
// the plugin's file.
func TestEntryPathLinkedToAnotherClientsConfigIsNotWrapped(t *testing.T) {
	home, path := marketHome(t, `{"plugins": [{"name": "a", "source": "./a", "mcpServers": "./x.json"}, {"name": "b", "source": "./b"}]}`)
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	writeFiles(t, map[string]string{cursor: `{"mcpServers": {"db": {"command": "npx", "args": ["db-server"]}}}`})
	if err := os.Symlink(cursor, filepath.Join(filepath.Dir(filepath.Dir(path)), "a", "x.json")); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t)
	o.DefaultHome = o.Home
	files := Existing(LoadedFiles(Env{GOOS: "linux", Home: home}))
	if r := Status(files, o); r.Enforcing() {
		t.Errorf("the linked file's server is not counted: %+v", r.Servers)
	}
	if _, err := PlanWrap(files, o, &Records{Version: recordsVersion}).Apply(); err != nil {
		t.Fatal(err)
	}
	if after := readTestFile(t, cursor); strings.Contains(after, "plugin:a:") {
		t.Errorf("wrap rewrote Cursor's config through the plugin's link:\n%s", after)
	}
}
