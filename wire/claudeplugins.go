package wire

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Claude Code plugins (2.1.328, checked 2026-12-01 by installing plugins
// into a fake home and reading what `claude mcp list` starts):
//
//   - the config folder is $CLAUDE_CONFIG_DIR when set, ~/.claude
//     otherwise; settings.json there says which plugins are on
//     ("enabledPlugins": {"ID": bool}, ID = "plugin@marketplace");
//   - plugins/installed_plugins.json ({"version": 2, "plugins": {ID:
//     [{"installPath": ...}, ...]}}) lists what is installed, and
//     plugins/known_marketplaces.json ({NAME: {"source": {"source":
//     "directory", ...}, "installLocation": DIR}}) where each marketplace
//     lives;
//   - a plugin from a "directory" marketplace whose source is a relative
//     path is read from that folder (installLocation joined with the
//     plugin's source in .claude-plugin/marketplace.json): the user's own
//     files. Every other plugin runs from its copy under installPath, in
//     plugins/cache, replaced on `claude plugin update`;
//   - ~/.claude/skills/NAME with a .claude-plugin/plugin.json is the
//     plugin NAME@skills-dir, read in place;
//   - a plugin's servers are in .mcp.json at its root ({"mcpServers":
//     {...}} or the servers at the top level) and in the mcpServers
//     member of .claude-plugin/plugin.json: an object of servers, a
//     path (relative to the root) of another such file, or a list of
//     paths. Claude Code calls them plugin:PLUGIN:SERVER.

// claudeDir is Claude Code's config folder.
func (e Env) claudeDir() string {
	if d := e.getenv("CLAUDE_CONFIG_DIR"); d != "" && filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(e.Home, ".claude")
}

const claudeCacheWhy = "Claude Code's copy of a marketplace plugin, replaced when the plugin updates: wrap does not edit it"

// ClaudePluginFiles lists the server files of every installed Claude
// Code plugin and skills-folder plugin.
func ClaudePluginFiles(e Env) []File {
	dir := e.claudeDir()
	plugins := filepath.Join(dir, "plugins")
	var out []File
	settings := filepath.Join(dir, "settings.json")
	enabled, err := claudeEnabledPlugins(settings)
	if err != nil {
		out = append(out, indexError("claude-code", settings, "plugins", "cannot read which plugins are enabled: "+errText(err)))
	}
	installed := filepath.Join(plugins, "installed_plugins.json")
	root, present, err := readIndex(installed, maxIndexSize)
	switch {
	case err != nil:
		out = append(out, indexError("claude-code", installed, "plugins", "cannot read the installed plugins: "+errText(err)))
	case present:
		markets := filepath.Join(plugins, "known_marketplaces.json")
		known, _, merr := readIndex(markets, maxIndexSize)
		mk := claudeMarkets{known: known, knownErr: merr}
		mk.extra, mk.extraErr = claudeSettingsObject(settings, "extraKnownMarketplaces")
		ids, err := claudeInstalls(root)
		if err != nil {
			out = append(out, indexError("claude-code", installed, "plugins", "cannot read the installed plugins: "+err.Error()))
			break
		}
		// read is each plugin's folder read already: installs in several
		// scopes of a directory marketplace's plugin are one folder.
		read := map[claudeInstall]bool{}
		for _, in := range ids {
			source := "plugin " + in.id
			pluginName, market, _ := strings.Cut(in.id, "@")
			rootDir, noWrap := in.path, claudeCacheWhy
			if d, ok, err := claudeDirectoryPlugin(mk, pluginName, market); err != nil {
				out = append(out, indexError("claude-code", markets, source, "cannot tell where the plugin is read from: "+err.Error()))
				continue
			} else if ok {
				rootDir, noWrap = d, ""
			}
			if read[claudeInstall{in.id, rootDir}] {
				continue
			}
			read[claudeInstall{in.id, rootDir}] = true
			p := plugin{client: "claude-code", root: rootDir, managed: plugins, source: source, name: pluginName, noWrap: noWrap, disabled: enabled[in.id] == "false"}
			if !hasClaudeManifest(rootDir) {
				// The marketplace entry is the plugin's manifest.
				manifest, servers, err := claudeMarketEntry(mk, pluginName, market)
				if err != nil {
					if manifest == "" {
						manifest = markets
					}
					// Unreadable, and still count what the plugin's own
					// files hold.
					out = append(out, indexError("claude-code", manifest, source, "cannot read the plugin's marketplace entry, which defines its servers: "+err.Error()))
				} else {
					p.entry, p.entryFile = servers, manifest
				}
			}
			out = append(out, pluginServers(p)...)
		}
	}
	out = mergeMarketFiles(out)
	skills, err := subdirs(filepath.Join(dir, "skills"))
	if err != nil {
		out = append(out, indexError("claude-code", filepath.Join(dir, "skills"), "plugins", "cannot list the skills folder: "+errText(err)))
	}
	for _, d := range skills {
		if _, err := os.Stat(filepath.Join(d, ".claude-plugin", "plugin.json")); err != nil {
			continue // a skill, not a plugin
		}
		name := filepath.Base(d)
		out = append(out, pluginServers(plugin{client: "claude-code", root: d, managed: plugins, source: "plugin " + name + "@skills-dir", name: name, disabled: enabled[name+"@skills-dir"] == "false"})...)
	}
	return out
}

// claudeEnabledPlugins reads enabledPlugins of settings.json: ID to
// "true" or "false" (a value of another type is an error).
func claudeEnabledPlugins(path string) (map[string]string, error) {
	m, err := claudeSettingsObject(path, "enabledPlugins")
	if err != nil || m == nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range m.Members {
		if _, dup := out[p.Key]; dup {
			return nil, errors.New("a plugin is named twice in enabledPlugins")
		}
		if p.Value.Kind != Bool {
			// Newer versions allow a list of scopes; anything but false
			// may be on.
			out[p.Key] = "true"
			continue
		}
		out[p.Key] = p.Value.Str
	}
	return out, nil
}

// claudeSettingsObject reads the object member key of settings.json; nil
// when the file or the member is absent (or null), an error when the
// member is of another type.
func claudeSettingsObject(path, key string) (*Node, error) {
	root, present, err := readIndex(path, maxConfigSize)
	if err != nil || !present {
		return nil, err
	}
	m, err := root.Get(key)
	if err != nil || m == nil || m.Value.Kind == Null {
		return nil, err
	}
	if m.Value.Kind != Object {
		return nil, errors.New(key + " is not an object")
	}
	return m.Value, nil
}

type claudeInstall struct{ id, path string }

// claudeInstalls reads installed_plugins.json (version 2).
func claudeInstalls(root *Node) ([]claudeInstall, error) {
	v, err := root.Get("version")
	if err != nil {
		return nil, err
	}
	if v == nil || v.Value.Kind != Number || v.Value.Str != "2" {
		return nil, errors.New("not version 2 of the format, the one mcpseal reads")
	}
	p, err := root.Get("plugins")
	if err != nil || p == nil {
		return nil, err
	}
	if p.Value.Kind != Object {
		return nil, errors.New("plugins is not an object")
	}
	if len(p.Value.Members) > maxLoaded {
		return nil, errors.New("more plugins than mcpseal reads")
	}
	var out []claudeInstall
	seen := map[string]bool{}
	// A plugin installed in several scopes (user, project, local) is
	// listed once per scope, often with the same installPath; Claude
	// Code starts its servers once.
	installed := map[claudeInstall]bool{}
	for _, m := range p.Value.Members {
		if seen[m.Key] {
			return nil, errors.New("a plugin is listed twice")
		}
		seen[m.Key] = true
		if m.Value.Kind != Array || len(m.Value.Elems) > maxLoaded {
			return nil, errors.New("a plugin's installs are not a list")
		}
		for _, in := range m.Value.Elems {
			path, ok, err := stringMember(in, "installPath")
			if err != nil || !ok || !filepath.IsAbs(path) {
				return nil, errors.New("an install without an absolute installPath")
			}
			in := claudeInstall{id: m.Key, path: filepath.Clean(path)}
			if !installed[in] {
				installed[in] = true
				out = append(out, in)
			}
		}
	}
	return out, nil
}

// claudeDirectoryPlugin finds where a plugin of a "directory" marketplace
// is read from; ok is false for a marketplace of another kind (its
// plugins run from installPath). markets is known_marketplaces.json.
func claudeDirectoryPlugin(markets claudeMarkets, plugin, market string) (dir string, ok bool, err error) {
	m, known, err := markets.lookup(market)
	if err != nil || !known || m.kind != "directory" {
		return "", false, err
	}
	if m.loc == "" {
		return "", false, errors.New("a directory marketplace without an absolute installLocation")
	}
	loc := m.loc
	manifest := filepath.Join(loc, ".claude-plugin", "marketplace.json")
	root, present, err := readIndex(manifest, maxIndexSize)
	if err != nil || !present {
		return "", false, fmt.Errorf("the marketplace's marketplace.json cannot be read")
	}
	list, err := root.Get("plugins")
	if err != nil || list == nil || list.Value.Kind != Array || len(list.Value.Elems) > maxLoaded {
		return "", false, errors.New("the marketplace's plugins are not a list")
	}
	found := false
	for _, p := range list.Value.Elems {
		name, _, err := stringMember(p, "name")
		if err != nil || name != plugin {
			continue
		}
		if found {
			return "", false, errors.New("the marketplace lists the plugin twice")
		}
		found = true
		s, err := p.Get("source")
		if err != nil {
			return "", false, err
		}
		if s == nil || s.Value.Kind != String {
			ok = false // fetched from elsewhere into the cache
			continue
		}
		if filepath.IsAbs(s.Value.Str) {
			dir, ok = filepath.Clean(s.Value.Str), true
		} else {
			dir, ok = filepath.Join(loc, s.Value.Str), true
		}
	}
	if !found {
		return "", false, errors.New("the marketplace does not list the plugin")
	}
	return dir, ok, nil
}
