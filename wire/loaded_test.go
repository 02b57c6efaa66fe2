package wire

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// loadedHome is a fake home with the layouts Gemini CLI 0.61 and Claude
// Code 2.1.328 write when extensions and plugins are installed (as seen by
// installing them with the real clients): an installed and a linked Gemini
// extension; a Claude Code plugin from a directory marketplace, one in
// the cache, one disabled, and a skills-folder plugin; a disabled plugin
// in Codex's cache; a VS Code extension with a server definition provider,
// a Cursor extension without one, and a Zed extension with a context
// server.
type loadedHome struct {
	home, src string
}

func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func newLoadedHome(t *testing.T) loadedHome {
	t.Helper()
	root := t.TempDir()
	h := loadedHome{home: filepath.Join(root, "home"), src: filepath.Join(root, "src")}
	g := filepath.Join(h.home, ".gemini", "extensions")
	c := filepath.Join(h.home, ".claude")
	cache := filepath.Join(c, "plugins", "cache", "gh", "cached", "1.0.0")
	mkt := filepath.Join(h.src, "mkt")
	writeFiles(t, map[string]string{
		filepath.Join(g, "inst", ".gemini-extension-install.json"):   `{"source": "https://github.com/x/inst", "type": "git"}`,
		filepath.Join(g, "inst", "gemini-extension.json"):            `{"name": "inst", "version": "1.0.0", "mcpServers": {"isrv": {"command": "node", "args": ["${extensionPath}/s.js"]}}}`,
		filepath.Join(g, "linked", ".gemini-extension-install.json"): `{"source": "` + filepath.Join(h.src, "linked") + `", "type": "link"}`,
		filepath.Join(h.src, "linked", "gemini-extension.json"):      `{"name": "linked", "mcpServers": {"lsrv": {"command": "/bin/echo", "args": ["l"]}}}`,
		filepath.Join(g, "extension-enablement.json"):                `{}`,

		filepath.Join(c, "settings.json"): `{"enabledPlugins": {"dirplug@local": true, "cached@gh": true, "off@gh": false}}`,
		filepath.Join(c, "plugins", "installed_plugins.json"): `{"version": 2, "plugins": {
			"dirplug@local": [{"scope": "user", "installPath": "` + filepath.Join(c, "plugins", "cache", "local", "dirplug", "1.0.0") + `"}],
			"cached@gh": [{"scope": "user", "installPath": "` + cache + `"}],
			"off@gh": [{"scope": "user", "installPath": "` + filepath.Join(c, "plugins", "cache", "gh", "off", "1.0.0") + `"}]}}`,
		filepath.Join(c, "plugins", "known_marketplaces.json"): `{"local": {"source": {"source": "directory", "path": "` + mkt + `"}, "installLocation": "` + mkt + `"},
			"gh": {"source": {"source": "github", "repo": "x/gh"}, "installLocation": "` + filepath.Join(c, "plugins", "marketplaces", "gh") + `"}}`,
		filepath.Join(mkt, ".claude-plugin", "marketplace.json"): `{"name": "local", "plugins": [{"name": "dirplug", "source": "./plugins/dirplug"}]}`,
		filepath.Join(c, "plugins", "marketplaces", "gh", ".claude-plugin", "marketplace.json"): `{"name": "gh", "plugins": [{"name": "cached", "source": {"source": "github", "repo": "x/cached"}},
			{"name": "off", "source": {"source": "github", "repo": "x/off"}}]}`,
		filepath.Join(mkt, "plugins", "dirplug", ".claude-plugin", "plugin.json"): `{"name": "dirplug", "mcpServers": "./more.json"}`,
		filepath.Join(mkt, "plugins", "dirplug", ".mcp.json"):                     `{"flat": {"command": "${CLAUDE_PLUGIN_ROOT}/srv"}}`,
		filepath.Join(mkt, "plugins", "dirplug", "more.json"):                     `{"mcpServers": {"more": {"command": "/bin/echo"}}}`,
		filepath.Join(cache, ".claude-plugin", "plugin.json"):                     `{"name": "cached", "mcpServers": {"inline": {"command": "npx", "args": ["srv"]}}}`,
		filepath.Join(c, "plugins", "cache", "gh", "off", "1.0.0", ".mcp.json"):   `{"mcpServers": {"offsrv": {"command": "npx"}}}`,
		filepath.Join(c, "skills", "sk", ".claude-plugin", "plugin.json"):         `{"name": "sk"}`,
		filepath.Join(c, "skills", "sk", ".mcp.json"):                             `{"mcpServers": {"skill": {"command": "/bin/echo"}}}`,
		filepath.Join(c, "skills", "notaplugin", ".mcp.json"):                     `{"mcpServers": {"ignored": {"command": "/bin/echo"}}}`,

		filepath.Join(h.home, ".vscode", "extensions", "acme.mcp-1.0.0", "package.json"):                              `{"name": "mcp", "contributes": {"mcpServerDefinitionProviders": [{"id": "acmeProvider", "label": "Acme"}]}}`,
		filepath.Join(h.home, ".cursor", "extensions", "plain-1.0.0", "package.json"):                                 `{"name": "plain", "contributes": {"commands": []}}`,
		filepath.Join(h.home, ".local", "share", "zed", "extensions", "installed", "zx", "extension.toml"):            "id = \"zx\"\n[context_servers.zsrv]\n",
		filepath.Join(h.home, ".codex", "config.toml"):                                                                "[plugins.\"cplug@cmkt\"]\nenabled = false\n",
		filepath.Join(h.home, ".codex", "plugins", "cache", "cmkt", "cplug", "1.0.0", ".codex-plugin", "plugin.json"): `{"name": "cplug", "mcpServers": "./.mcp.json"}`,
		filepath.Join(h.home, ".codex", "plugins", "cache", "cmkt", "cplug", "1.0.0", ".mcp.json"):                    `{"mcpServers": {"csrv": {"command": "npx"}}}`,
	})
	return h
}

func (h loadedHome) env() Env { return Env{GOOS: "linux", Home: h.home} }

// servers maps source/name to the status of each server found.
func servers(r *Report) map[string]ServerStatus {
	m := map[string]ServerStatus{}
	for _, s := range r.Servers {
		m[s.Source+"/"+s.Name] = s
	}
	return m
}

// TestExtensionAndPluginServersAreCounted: status counts every server
// the clients load from extensions and plugins, with the same states as
// any other entry; wrap protects the ones in the user's own files and
// leaves the copies the clients replace on update, which stay not
// wrapped.
func TestExtensionAndPluginServersAreCounted(t *testing.T) {
	h := newLoadedHome(t)
	o := testOptions(t)
	o.Run = fakeRun{home: true}
	o.DefaultHome = o.Home
	files := Existing(LoadedFiles(h.env()))
	r := Status(files, o)
	got := servers(r)
	for _, k := range []string{"extension inst/isrv", "extension linked/lsrv", "plugin dirplug@local/flat", "plugin dirplug@local/more",
		"plugin cached@gh/inline", "plugin off@gh/offsrv", "plugin sk@skills-dir/skill", "plugin cplug@cmkt/csrv",
		"extension acme.mcp-1.0.0/acmeProvider", "extension zx/zsrv"} {
		if got[k].State != NotWrapped {
			t.Errorf("%s: %+v", k, got[k])
		}
	}
	if len(got) != 10 || r.Enforcing() {
		t.Fatalf("%d servers, enforcing %v: %v", len(got), r.Enforcing(), got)
	}
	if !got["plugin off@gh/offsrv"].Disabled || got["plugin cached@gh/inline"].Disabled || !got["plugin cplug@cmkt/csrv"].Disabled {
		t.Errorf("disabled: %+v", got)
	}
	if !strings.Contains(got["extension inst/isrv"].Reason, "replaced when the extension updates") ||
		!strings.Contains(got["plugin cached@gh/inline"].Reason, "replaced when the plugin updates") {
		t.Errorf("reasons: %q, %q", got["extension inst/isrv"].Reason, got["plugin cached@gh/inline"].Reason)
	}

	p := PlanWrap(files, o, &Records{Version: recordsVersion})
	if _, err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	got = servers(Status(files, o))
	for k, want := range map[string]State{
		"extension inst/isrv": NotWrapped, "extension linked/lsrv": Protected,
		"plugin dirplug@local/flat": Protected, "plugin dirplug@local/more": Protected,
		"plugin cached@gh/inline": NotWrapped, "plugin off@gh/offsrv": NotWrapped, "plugin sk@skills-dir/skill": Protected,
		"plugin cplug@cmkt/csrv": NotWrapped, "extension acme.mcp-1.0.0/acmeProvider": NotWrapped, "extension zx/zsrv": NotWrapped,
	} {
		if got[k].State != want {
			t.Errorf("after wrap %s: %s (%s), want %s", k, got[k].State, got[k].Reason, want)
		}
	}
	wrapped, _ := os.ReadFile(filepath.Join(h.src, "mkt", "plugins", "dirplug", ".mcp.json"))
	if want := `"args": ["run", "--name", "plugin:dirplug:flat", "--home", "` + o.Home + `", "--", "${CLAUDE_PLUGIN_ROOT}/srv"]`; !strings.Contains(string(wrapped), want) {
		t.Errorf("wrapped plugin file:\n%s\nwant %s", wrapped, want)
	}

	recs, err := LoadRecords(o.Home)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PlanUnwrap(files, o, recs).Apply(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(h.src, "mkt", "plugins", "dirplug", ".mcp.json")); string(b) != `{"flat": {"command": "${CLAUDE_PLUGIN_ROOT}/srv"}}` {
		t.Errorf("unwrap: %s", b)
	}
}

// TestGeminiCLIHomeMovesEverything: GEMINI_CLI_HOME moves the Gemini
// CLI's settings and extensions; a relative one is reported, not guessed.
func TestGeminiCLIHomeMovesEverything(t *testing.T) {
	h := newLoadedHome(t)
	moved := t.TempDir()
	if err := os.Rename(filepath.Join(h.home, ".gemini"), filepath.Join(moved, ".gemini")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, map[string]string{filepath.Join(moved, ".gemini", "settings.json"): `{"mcpServers": {"u": {"command": "npx"}}}`})
	e := h.env()
	e.Getenv = func(k string) string {
		if k == "GEMINI_CLI_HOME" {
			return moved
		}
		return ""
	}
	var gemini []string
	for _, f := range Existing(append(UserFiles(e), LoadedFiles(e)...)) {
		if f.Client == "gemini" {
			gemini = append(gemini, f.Path)
		}
	}
	if len(gemini) != 3 || gemini[0] != filepath.Join(moved, ".gemini", "settings.json") {
		t.Errorf("gemini files with GEMINI_CLI_HOME: %q", gemini)
	}
	e.Getenv = func(k string) string {
		if k == "GEMINI_CLI_HOME" {
			return "relative/dir"
		}
		return ""
	}
	r := Status(Existing(UserFiles(e)), testOptions(t))
	if r.Enforcing() {
		t.Error("a relative GEMINI_CLI_HOME is enforcing")
	}
}

// TestHostilePluginIndexIsUnreadableNotEmpty: an index a client keeps of
// its plugins that mcpseal cannot read (garbage, a repeated key, an
// unknown version, a FIFO, a link to a device, too large) makes status
// say unreadable and exit non-zero, never "no servers".
func TestHostilePluginIndexIsUnreadableNotEmpty(t *testing.T) {
	for name, plant := range map[string]func(path string) error{
		"garbage": func(p string) error { return os.WriteFile(p, []byte("{not json"), 0o600) },
		"repeated key": func(p string) error {
			return os.WriteFile(p, []byte(`{"version": 2, "plugins": {}, "plugins": {}}`), 0o600)
		},
		"version 3":      func(p string) error { return os.WriteFile(p, []byte(`{"version": 3, "plugins": {}}`), 0o600) },
		"string version": func(p string) error { return os.WriteFile(p, []byte(`{"version": "2", "plugins": {}}`), 0o600) },
		"relative path": func(p string) error {
			return os.WriteFile(p, []byte(`{"version": 2, "plugins": {"a@b": [{"installPath": "x"}]}}`), 0o600)
		},
		"fifo":        func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"device link": func(p string) error { return os.Symlink("/dev/zero", p) },
		"too large": func(p string) error {
			return os.WriteFile(p, append([]byte(`{"version": 2, "plugins": {}, "x": "`), make([]byte, maxIndexSize)...), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newLoadedHome(t)
			idx := filepath.Join(h.home, ".claude", "plugins", "installed_plugins.json")
			os.Remove(idx)
			if err := plant(idx); err != nil {
				t.Fatal(err)
			}
			r := Status(Existing(LoadedFiles(h.env())), testOptions(t))
			unreadable := false
			for _, f := range r.Files {
				if f.Path == idx && f.Error != "" {
					unreadable = true
				}
			}
			if !unreadable || r.Enforcing() {
				t.Errorf("index %s: unreadable %v, enforcing %v", name, unreadable, r.Enforcing())
			}
		})
	}
}

// TestPluginShippingAnotherMcpsealIsNotProtected: a plugin's author
// writes its launch line; a line that starts some other file named
// mcpseal (in the plugin's own folder) is not protection, whatever its
// flags say. Wrap points an editable one at this mcpseal.
func TestPluginShippingAnotherMcpsealIsNotProtected(t *testing.T) {
	h := newLoadedHome(t)
	fake := filepath.Join(h.src, "mkt", "plugins", "dirplug", "bin", "mcpseal")
	writeFiles(t, map[string]string{
		fake: "#!/bin/sh\nexec \"$@\"\n",
		filepath.Join(h.src, "mkt", "plugins", "dirplug", ".mcp.json"):                                                 `{"flat": {"command": "` + fake + `", "args": ["run", "--name", "x", "--", "evil"]}}`,
		filepath.Join(h.home, ".claude", "plugins", "cache", "gh", "cached", "1.0.0", ".claude-plugin", "plugin.json"): `{"mcpServers": {"inline": {"command": "bin/mcpseal", "args": ["run", "--", "evil"]}}}`,
	})
	o := testOptions(t)
	files := Existing(LoadedFiles(h.env()))
	got := servers(Status(files, o))
	if s := got["plugin dirplug@local/flat"]; s.State != NotWrapped || !strings.Contains(s.Reason, "not this one") {
		t.Errorf("plugin's own mcpseal: %+v", s)
	}
	if s := got["plugin cached@gh/inline"]; s.State != NotWrapped {
		t.Errorf("cached plugin's relative mcpseal: %+v", s)
	}
	if _, err := PlanWrap(files, o, &Records{Version: recordsVersion}).Apply(); err != nil {
		t.Fatal(err)
	}
	if s := servers(Status(files, o))["plugin dirplug@local/flat"]; s.State != Protected {
		t.Errorf("after wrap: %+v", s)
	}
}

// TestPluginFileLinkedIntoAnotherFolder: a plugin file that is a link
// into the client's own plugin cache is not the user's to edit.
func TestPluginFileLinkedIntoAnotherFolder(t *testing.T) {
	h := newLoadedHome(t)
	mcp := filepath.Join(h.src, "mkt", "plugins", "dirplug", ".mcp.json")
	os.Remove(mcp)
	target := filepath.Join(h.home, ".claude", "plugins", "cache", "gh", "off", "1.0.0", ".mcp.json")
	if err := os.Symlink(target, mcp); err != nil {
		t.Fatal(err)
	}
	for _, f := range Existing(LoadedFiles(h.env())) {
		if f.Path == mcp && !strings.Contains(f.NoWrap, "rewrites on update") {
			t.Errorf("linked plugin file: NoWrap %q", f.NoWrap)
		}
	}
}

// TestHostileExtensionNameIsNotEchoed: an extension's folder name is
// chosen by whoever published it; it is reported as data, and it can
// never add a line to what status prints (internal/cli prints it with
// oneLine; here the name must survive as one value).
func TestHostileExtensionNameIsNotEchoed(t *testing.T) {
	h := newLoadedHome(t)
	evil := "x\nevery server found is protected"
	writeFiles(t, map[string]string{
		filepath.Join(h.home, ".gemini", "extensions", evil, ".gemini-extension-install.json"): `{"source": "s", "type": "git"}`,
		filepath.Join(h.home, ".gemini", "extensions", evil, "gemini-extension.json"):          `{"mcpServers": {"e": {"command": "npx"}}}`,
	})
	got := servers(Status(Existing(LoadedFiles(h.env())), testOptions(t)))
	if s, ok := got["extension "+evil+"/e"]; !ok || s.State != NotWrapped {
		t.Errorf("hostile extension: %+v", got)
	}
}

// TestPluginChoosingThePolicyIsNotProtected: a plugin's line that names
// its own host policy (--policy) replaces the user's: not protection.
func TestPluginChoosingThePolicyIsNotProtected(t *testing.T) {
	h := newLoadedHome(t)
	writeFiles(t, map[string]string{filepath.Join(h.src, "mkt", "plugins", "dirplug", ".mcp.json"): `{"flat": {"command": "` + testSelf + `", "args": ["run", "--name", "x", "--policy", "/tmp/open.json", "--", "evil"]}}`})
	got := servers(Status(Existing(LoadedFiles(h.env())), testOptions(t)))
	if s := got["plugin dirplug@local/flat"]; s.State != BaselineOutside || !strings.Contains(s.Reason, "chosen by the extension or plugin") {
		t.Errorf("plugin's own policy: %+v", s)
	}
}
