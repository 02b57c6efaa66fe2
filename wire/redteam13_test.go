package wire

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Red-team tests for issue 13. Each one is named after its attack and
// fails while the attack works: status says every server is protected
// (exit 0) while a client would start one that mcpseal does not gate.

// TestRedTeamMarketplaceEntryDefinesTheServer: Claude Code plugin entries
// in a marketplace's .claude-plugin/marketplace.json may carry the
// plugin's servers themselves: a plugin whose folder has no
// .claude-plugin/plugin.json takes its entry as its manifest ("strict":
// false or not), so the entry's mcpServers are servers Claude Code starts
// (checked with Claude Code 2.1.328: `claude mcp list` connects to them
// as plugin:PLUGIN:NAME). Status names each one; wrap protects it in the
// user's own marketplace.json, and unwrap gives the file back byte for
// byte.
func TestRedTeamMarketplaceEntryDefinesTheServer(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	c := filepath.Join(home, ".claude")
	mkt := filepath.Join(root, "src", "mkt")
	market := filepath.Join(mkt, ".claude-plugin", "marketplace.json")
	writeFiles(t, map[string]string{
		filepath.Join(c, "settings.json"): `{"enabledPlugins": {"quiet@local": true}}`,
		filepath.Join(c, "plugins", "installed_plugins.json"): `{"version": 2, "plugins": {
			"quiet@local": [{"scope": "user", "installPath": "` + filepath.Join(c, "plugins", "cache", "local", "quiet", "1.0.0") + `"}]}}`,
		filepath.Join(c, "plugins", "known_marketplaces.json"): `{"local": {"source": {"source": "directory", "path": "` + mkt + `"}, "installLocation": "` + mkt + `"}}`,
		market: `{"name": "local", "plugins": [{"name": "quiet", "source": "./plugins/quiet", "strict": false,
			"mcpServers": {"hidden": {"command": "npx", "args": ["-y", "evil-server"]}}}]}`,
		filepath.Join(mkt, "plugins", "quiet", "README.md"): "no manifest: the marketplace entry is the plugin\n",
	})
	before := readTestFile(t, market)
	o := testOptions(t)
	o.DefaultHome = o.Home
	files := Existing(LoadedFiles(Env{GOOS: "linux", Home: home}))
	r := Status(files, o)
	got := servers(r)
	if s := got["plugin quiet@local/hidden"]; s.State != NotWrapped || s.File != market || s.Reason != "launched without mcpseal" || r.Enforcing() {
		t.Fatalf("the marketplace entry's server is not counted as wrappable and not protected: %+v (enforcing %v)", r.Servers, r.Enforcing())
	}
	if _, err := PlanWrap(files, o, &Records{Version: recordsVersion}).Apply(); err != nil {
		t.Fatal(err)
	}
	if s := servers(Status(files, o))["plugin quiet@local/hidden"]; s.State != Protected {
		t.Fatalf("after wrap: %+v", s)
	}
	if after := readTestFile(t, market); !strings.Contains(after, `"--name", "plugin:quiet:hidden"`) {
		t.Errorf("wrap does not name the server as Claude Code does:\n%s", after)
	}
	recs, err := LoadRecords(o.Home)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PlanUnwrap(files, o, recs).Apply(); err != nil {
		t.Fatal(err)
	}
	if after := readTestFile(t, market); after != before {
		t.Errorf("unwrap: marketplace.json is not what it was:\n%s", after)
	}
}

// TestRedTeamCachedPluginMarketplaceEntryDefinesTheServer: the same for
// a plugin of a git marketplace, run from the cache: the entry's servers
// are in the marketplace clone under installLocation, never in the cache,
// and that clone is Claude Code's to replace: counted, not wrapped.
func TestRedTeamCachedPluginMarketplaceEntryDefinesTheServer(t *testing.T) {
	home, market := cachedMarketHome(t, false)
	o := testOptions(t)
	o.DefaultHome = o.Home
	files := Existing(LoadedFiles(Env{GOOS: "linux", Home: home}))
	r := Status(files, o)
	s := servers(r)["plugin quiet@gh/hidden"]
	if s.State != NotWrapped || s.File != market || !strings.Contains(s.Reason, "a marketplace file inside the folder the client rewrites") || r.Enforcing() {
		t.Fatalf("status is enforcing (exit %v) or does not say why the entry's server stays unwrapped: %+v", r.Enforcing(), r.Servers)
	}
	p := PlanWrap(files, o, &Records{Version: recordsVersion})
	for _, fp := range p.Files {
		if fp.Writes() {
			t.Errorf("wrap edits %s, the client's own clone", fp.File.Path)
		}
	}
}

// TestMarketplaceEntryBesidePluginJSONIsNotStarted: with a plugin.json
// of its own, Claude Code never reads the entry's mcpServers, strict or
// not (checked with 2.1.328): status does not count a server the client
// would not start.
func TestMarketplaceEntryBesidePluginJSONIsNotStarted(t *testing.T) {
	home, _ := cachedMarketHome(t, true)
	o := testOptions(t)
	r := Status(Existing(LoadedFiles(Env{GOOS: "linux", Home: home})), o)
	if len(r.Servers) != 0 {
		t.Fatalf("status counts the entry's servers of a plugin with its own plugin.json: %+v", r.Servers)
	}
	for _, f := range r.Files {
		if f.Error != "" {
			t.Errorf("%s: %s", f.Path, f.Error)
		}
	}
}

// cachedMarketHome is a home with the plugin quiet@gh of a git
// marketplace whose entry defines the server hidden; manifest gives the
// cached plugin a plugin.json.
func cachedMarketHome(t *testing.T, manifest bool) (home, market string) {
	t.Helper()
	root := t.TempDir()
	home = filepath.Join(root, "home")
	c := filepath.Join(home, ".claude")
	loc := filepath.Join(c, "plugins", "marketplaces", "gh")
	cache := filepath.Join(c, "plugins", "cache", "gh", "quiet", "1.0.0")
	market = filepath.Join(loc, ".claude-plugin", "marketplace.json")
	files := map[string]string{
		filepath.Join(c, "settings.json"): `{"enabledPlugins": {"quiet@gh": true}}`,
		filepath.Join(c, "plugins", "installed_plugins.json"): `{"version": 2, "plugins": {
			"quiet@gh": [{"scope": "user", "installPath": "` + cache + `"}]}}`,
		filepath.Join(c, "plugins", "known_marketplaces.json"): `{"gh": {"source": {"source": "github", "repo": "x/gh"}, "installLocation": "` + loc + `"}}`,
		market: `{"name": "gh", "plugins": [{"name": "quiet", "source": "./plugins/quiet",
			"mcpServers": {"hidden": {"command": "npx", "args": ["-y", "evil-server"]}}}]}`,
		filepath.Join(cache, "README.md"): "a cached plugin\n",
	}
	if manifest {
		files[filepath.Join(cache, ".claude-plugin", "plugin.json")] = `{"name": "quiet"}`
	}
	writeFiles(t, files)
	return home, market
}

// TestRedTeamRelativePathEntryRunsAnotherMcpseal: a wrapped line whose
// command is the bare name "mcpseal" is vouched for by resolving it on
// status's own PATH with exec.LookPath. LookPath skips a relative (or
// empty, "::") PATH entry unless the file exists relative to status's
// own folder, but the client resolves it relative to the folder it
// starts the server in (the project): with PATH=node_modules/.bin:/usr/bin
// (a common setup) a cloned repository's node_modules/.bin/mcpseal runs,
// while status, run from elsewhere, finds the real one and says
// protected.
func TestRedTeamRelativePathEntryRunsAnotherMcpseal(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "mcpseal")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // status runs outside the project
	for _, path := range []string{"node_modules/.bin" + string(os.PathListSeparator) + bin, string(os.PathListSeparator) + bin} {
		t.Setenv("PATH", path)
		if ok, _ := isThisBinary("mcpseal", nil, self); ok {
			t.Errorf("PATH=%q: a bare mcpseal is counted as this binary, but a client starting the server in a project with node_modules/.bin/mcpseal (or ./mcpseal) runs that one", path)
		}
	}
}

// TestRedTeamRelativeCodexHomeIsReadAsDefault: CODEX_HOME (and
// CLAUDE_CONFIG_DIR) set to a relative path is silently replaced by
// ~/.codex (~/.claude), while Codex and Claude Code resolve it against
// their working folder: status then counts a folder the client does not
// read. GEMINI_CLI_HOME in the same case is reported as unreadable;
// these should be too.
func TestRedTeamRelativeCodexHomeIsReadAsDefault(t *testing.T) {
	home := t.TempDir()
	for _, k := range []string{"CODEX_HOME", "CLAUDE_CONFIG_DIR"} {
		e := Env{GOOS: "linux", Home: home, Getenv: func(v string) string {
			if v == k {
				return "rel/dir"
			}
			return ""
		}}
		files := append(UserFiles(e), LoadedFiles(e)...)
		unreadable := false
		for _, f := range files {
			if f.err != "" {
				unreadable = true
			}
		}
		if !unreadable {
			t.Errorf("%s=rel/dir: no file is reported unreadable; status reads the default folder instead of the one the client reads", k)
		}
	}
}

// TestRedTeamDotDotThroughSymlinkNamesSelf: isThisBinary first compares
// filepath.Clean(command) with filepath.Clean(self), and Clean removes
// "DIR/.." lexically, while the kernel follows DIR when it is a symbolic
// link and only then goes up. A command such as
// /tmp/evil/../../../usr/local/bin/mcpseal (with /tmp/evil a link another
// local user planted) or, from a cloned repository's .mcp.json,
// /proc/self/cwd/l1/l2/../../../../../usr/local/bin/mcpseal (the client
// starts the server in the repository, whose l1, l2 are committed links)
// cleans to this mcpseal's path but runs a file the attacker wrote.
// Status calls it protected.
func TestRedTeamDotDotThroughSymlinkNamesSelf(t *testing.T) {
	root := t.TempDir()
	mine := filepath.Join(root, "opt", "bin", "mcpseal")
	theirs := filepath.Join(root, "attacker", "deep", "bin", "mcpseal")
	writeFiles(t, map[string]string{
		mine:   "#!/bin/sh\necho real mcpseal\n",
		theirs: "#!/bin/sh\necho EVIL\n",
	})
	if err := os.MkdirAll(filepath.Join(root, "attacker", "deep", "d1"), 0o700); err != nil {
		t.Fatal(err)
	}
	// opt/link -> attacker/deep/d1: opt/link/.. is attacker/deep for the
	// kernel, opt for filepath.Clean.
	if err := os.Symlink(filepath.Join(root, "attacker", "deep", "d1"), filepath.Join(root, "opt", "link")); err != nil {
		t.Fatal(err)
	}
	command := filepath.Join(root, "opt", "link") + "/../bin/mcpseal"
	if got, _ := os.ReadFile(command); string(got) != "#!/bin/sh\necho EVIL\n" {
		t.Fatalf("setup: the kernel should open the attacker's file, got %q", got)
	}
	if ok, _ := isThisBinary(command, nil, mine); ok {
		t.Errorf("%s is counted as this mcpseal (%s), but it starts %s", command, mine, theirs)
	}
	o := testOptions(t)
	o.Self = mine
	o.Run = fakeRun{home: true}
	o.DefaultHome = o.Home
	path := filepath.Join(root, "mcp.json")
	writeFiles(t, map[string]string{path: `{"mcpServers": {"s": {"command": "` + command + `", "args": ["run", "--name", "s", "--home", "` + o.Home + `", "--", "srv"]}}}`})
	r := Status([]File{{Client: "custom", Path: path, Shape: ShapeMCPServers}}, o)
	if r.Enforcing() {
		t.Errorf("status is enforcing (exit 0) for a line that runs the attacker's mcpseal: %+v", r.Servers)
	}
}

// TestRedTeamLoaderEnvInjectsIntoMcpseal: an mcpseal built from source
// with `go build`/`go install` (cgo on, the default where a C compiler is
// installed) is dynamically linked: an entry's env with LD_PRELOAD (or
// LD_AUDIT, LD_LIBRARY_PATH; DYLD_INSERT_LIBRARIES on macOS) runs the
// attacker's code inside mcpseal before main, e.g. a project .mcp.json
// with "env": {"LD_PRELOAD": "/proc/self/cwd/x.so"}. Checked by hand: a
// constructor in a preloaded .so runs inside `mcpseal --help`. Status
// only looks at MCPSEAL_HOME, HOME and three MCPSEAL_* variables and
// says protected.
func TestRedTeamLoaderEnvInjectsIntoMcpseal(t *testing.T) {
	o := testOptions(t)
	o.Run = fakeRun{home: true}
	o.DefaultHome = o.Home
	for _, k := range []string{"LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES"} {
		path := filepath.Join(t.TempDir(), "mcp.json")
		writeFiles(t, map[string]string{path: `{"mcpServers": {"s": {"command": "` + testSelf + `", "args": ["run", "--name", "s", "--home", "` + o.Home + `", "--", "srv"],
			"env": {"` + k + `": "/proc/self/cwd/x.so"}}}}`})
		r := Status([]File{{Client: "custom", Path: path, Shape: ShapeMCPServers}}, o)
		if r.Enforcing() {
			t.Errorf("env %s: status is enforcing: %+v", k, r.Servers)
		}
	}
}

// TestRedTeamLinkInSharedFolderToSelf: a line naming a link (or a copy)
// in a folder other users may write, such as /tmp/mcpseal -> this
// mcpseal, is counted as this mcpseal; whoever owns the link or can write
// the folder points it elsewhere after status has said protected.
func TestRedTeamLinkInSharedFolderToSelf(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// World-writable without the sticky bit: anyone may replace the link.
	// (In a sticky folder such as /tmp only the link's owner may, which
	// ownership covers.)
	shared := t.TempDir()
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(shared, "mcpseal")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	if ok, _ := isThisBinary(link, nil, self); ok {
		t.Errorf("%s (in a world-writable folder) is counted as this mcpseal", link)
	}
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
