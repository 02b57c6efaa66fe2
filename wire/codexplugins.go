package wire

import (
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// Codex plugins (0.169.0, checked 2026-12-01 by adding a plugin from a
// local marketplace into a fake CODEX_HOME and listing what `codex
// app-server` starts): `codex plugin add` copies the plugin into
// $CODEX_HOME/plugins/cache/MARKET/PLUGIN/VERSION and runs it from that
// copy, for a local marketplace too; config.toml's [plugins."PLUGIN@MARKET"]
// enabled turns it on or off. The manifest is .codex-plugin/plugin.json
// (Codex also reads a plugin's .claude-plugin/ and .cursor-plugin/
// manifests); servers are in .mcp.json and the manifest's mcpServers.

const codexCacheWhy = "Codex's copy of a plugin, replaced when the plugin is added again or updated: wrap does not edit it"

// codexDir is Codex's home folder.
func (e Env) codexDir() string {
	if d := e.getenv("CODEX_HOME"); d != "" && filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(e.Home, ".codex")
}

// CodexPluginFiles lists the server files of every plugin in Codex's
// plugin cache.
func CodexPluginFiles(e Env) []File {
	dir := e.codexDir()
	cache := filepath.Join(dir, "plugins", "cache")
	enabled := codexEnabledPlugins(filepath.Join(dir, "config.toml"))
	markets, err := subdirs(cache)
	if err != nil {
		return []File{indexError("codex", cache, "plugins", "cannot list the plugin cache: "+errText(err))}
	}
	var out []File
	n := 0
	for _, m := range markets {
		plugins, err := subdirs(m)
		if err != nil {
			out = append(out, indexError("codex", m, "plugins", "cannot list the plugin cache: "+errText(err)))
			continue
		}
		for _, p := range plugins {
			versions, err := subdirs(p)
			if err != nil {
				out = append(out, indexError("codex", p, "plugins", "cannot list the plugin cache: "+errText(err)))
				continue
			}
			for _, v := range versions {
				if n++; n > maxLoaded {
					return append(out, indexError("codex", cache, "plugins", "more plugins than mcpseal reads"))
				}
				name := filepath.Base(p)
				id := name + "@" + filepath.Base(m)
				out = append(out, pluginServers(plugin{client: "codex", root: v, managed: cache, source: "plugin " + id, name: name,
					manifests: []string{filepath.Join(".codex-plugin", "plugin.json"), filepath.Join(".claude-plugin", "plugin.json"), filepath.Join(".cursor-plugin", "plugin.json")},
					noWrap:    codexCacheWhy, disabled: enabled[id] != nil && !*enabled[id]})...)
			}
		}
	}
	return out
}

// codexEnabledPlugins reads [plugins."ID"] enabled from config.toml. A
// config that cannot be read counts every plugin as on (status reports
// the config itself).
func codexEnabledPlugins(path string) map[string]*bool {
	src, err := atomicfile.ReadFileFollow(path, maxConfigSize)
	if err != nil {
		return nil
	}
	var cfg struct {
		Plugins map[string]struct {
			Enabled *bool `toml:"enabled"`
		} `toml:"plugins"`
	}
	if _, err := toml.Decode(string(src), &cfg); err != nil {
		return nil
	}
	out := map[string]*bool{}
	for id, p := range cfg.Plugins {
		out[id] = p.Enabled
	}
	return out
}
