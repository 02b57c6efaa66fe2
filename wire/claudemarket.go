package wire

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// A Claude Code marketplace entry may define its plugin's servers
// (Claude Code 2.1.328, checked 2026-12-01 by installing plugins from a
// directory marketplace into a fake home and reading `claude mcp list`):
//
//   - when the plugin's folder has no .claude-plugin/plugin.json, Claude
//     Code takes the plugin's entry in the marketplace's
//     .claude-plugin/marketplace.json as its manifest, so the entry's
//     mcpServers are the plugin's servers, besides its .mcp.json: an
//     object of servers (defined in marketplace.json itself), a path
//     relative to the plugin's folder, or a list of paths. "strict":
//     false makes no difference to them;
//   - when the plugin has a plugin.json, the entry's mcpServers are not
//     read at all, strict or not: the plugin's own files are.
//
// The servers an entry defines itself live in marketplace.json: wrap may
// edit them where that file is the user's own (a directory marketplace
// outside the client's folders), by the same rules as a plugin's files.
// One marketplace.json holds the entries of several plugins, so it is one
// File (ShapeMarketplace) listing the installed plugins whose entries are
// read; each server carries its own plugin's name and source.

// claudeMarketEntry finds, for a plugin with no plugin.json, the
// mcpServers of its entry in its marketplace's marketplace.json (under
// the marketplace's installLocation, whatever its kind). servers is nil
// when the entry has none; an entry mcpseal cannot read for sure (the
// marketplace unknown or its place not known, the file unreadable, the
// plugin listed twice or not at all, a repeated key) is an error.
func claudeMarketEntry(markets claudeMarkets, plugin, market string) (manifest string, servers *Node, err error) {
	m, known, err := markets.lookup(market)
	if err != nil {
		return "", nil, err
	}
	if !known {
		return "", nil, errors.New("the plugin's marketplace is neither in known_marketplaces.json nor in settings.json's extraKnownMarketplaces")
	}
	if m.loc == "" {
		return "", nil, errors.New("a marketplace whose folder mcpseal cannot tell (no absolute installLocation)")
	}
	manifest = filepath.Join(m.loc, ".claude-plugin", "marketplace.json")
	root, present, err := readIndex(manifest, maxIndexSize)
	if err != nil || !present {
		return manifest, nil, errors.New("the marketplace's marketplace.json cannot be read")
	}
	entry, _, err := marketEntry(root, plugin)
	if err != nil {
		return manifest, nil, err
	}
	s, err := entry.Get("mcpServers")
	if err != nil {
		return manifest, nil, errors.New("the plugin's marketplace entry: " + err.Error())
	}
	if s == nil || s.Value.Kind == Null {
		return manifest, nil, nil
	}
	return manifest, s.Value, nil
}

// claudeMarkets is where Claude Code finds its marketplaces:
// plugins/known_marketplaces.json, where it records each one it has
// fetched, and the extraKnownMarketplaces of settings.json, where
// `claude plugin marketplace add` declares one. Claude Code 2.1.328
// resolves a marketplace declared only in settings.json (the red team
// removed known_marketplaces.json, or left it {}, after install, and
// `claude mcp list` still started the entry's servers), so a name
// missing from the first is looked up in the second; a recorded entry
// comes first, being where Claude Code has the marketplace on disk.
type claudeMarkets struct {
	known    *Node
	knownErr error
	extra    *Node // settings.json's extraKnownMarketplaces, or nil
	extraErr error
}

// claudeMarket is one marketplace: its source's kind and its folder (""
// when mcpseal cannot tell it).
type claudeMarket struct{ kind, loc string }

// lookup finds market; known is false when neither file declares it.
func (ms claudeMarkets) lookup(market string) (m claudeMarket, known bool, err error) {
	if ms.knownErr != nil {
		return m, false, errors.New("known_marketplaces.json: " + errText(ms.knownErr))
	}
	if ms.known != nil {
		e, err := ms.known.Get(market)
		if err != nil {
			return m, false, err
		}
		if e != nil {
			kind, err := marketKind(e.Value)
			if err != nil {
				return m, false, err
			}
			loc, has, err := stringMember(e.Value, "installLocation")
			if err != nil {
				return m, false, err
			}
			if has && filepath.IsAbs(loc) {
				m.loc = filepath.Clean(loc)
			}
			return claudeMarket{kind: kind, loc: m.loc}, true, nil
		}
	}
	if ms.extraErr != nil {
		return m, false, errors.New("settings.json's extraKnownMarketplaces: " + errText(ms.extraErr))
	}
	if ms.extra == nil {
		return m, false, nil
	}
	e, err := ms.extra.Get(market)
	if err != nil || e == nil {
		return m, false, err
	}
	kind, err := marketKind(e.Value)
	if err != nil {
		return m, false, err
	}
	m.kind = kind
	if kind == "directory" {
		// A directory marketplace is read in place: its folder is the
		// declared path.
		src, _ := e.Value.Get("source")
		if p, has, err := stringMember(src.Value, "path"); err == nil && has && filepath.IsAbs(p) {
			m.loc = filepath.Clean(p)
		}
	}
	return m, true, nil
}

// marketKind is the kind of a marketplace declaration's source
// ("directory", "github", ...); "" when it names none.
func marketKind(decl *Node) (string, error) {
	if decl.Kind != Object {
		return "", errors.New("a marketplace declaration that is not an object")
	}
	src, err := decl.Get("source")
	if err != nil || src == nil {
		return "", err
	}
	if src.Value.Kind != Object {
		return "", errors.New("a marketplace whose source is not an object")
	}
	kind, _, err := stringMember(src.Value, "source")
	return kind, err
}

// marketEntry is the one entry named plugin in a marketplace.json, and
// its index in plugins.
func marketEntry(root *Node, plugin string) (*Node, int, error) {
	list, err := root.Get("plugins")
	if err != nil || list == nil || list.Value.Kind != Array || len(list.Value.Elems) > maxLoaded {
		return nil, 0, errors.New("the marketplace's plugins are not a list mcpseal reads")
	}
	var found *Node
	at := 0
	for i, p := range list.Value.Elems {
		if p.Kind != Object {
			return nil, 0, errors.New("the marketplace lists a plugin that is not an object")
		}
		name, _, err := stringMember(p, "name")
		if err != nil {
			return nil, 0, errors.New("the marketplace lists a plugin whose name mcpseal cannot read")
		}
		if name != plugin {
			continue
		}
		if found != nil {
			return nil, 0, errors.New("the marketplace lists the plugin twice")
		}
		found, at = p, i
	}
	if found == nil {
		return nil, 0, errors.New("the marketplace does not list the plugin")
	}
	return found, at, nil
}

// hasClaudeManifest reports whether a plugin's folder has its own
// .claude-plugin/plugin.json, decided the way Claude Code and readIndex
// read it: through symbolic links. A link that points nowhere is no
// manifest (Claude Code then takes the marketplace entry as the
// manifest); anything else there but "no such file" counts, and
// pluginServers reports what it cannot read (a folder, a FIFO, a link
// loop).
func hasClaudeManifest(root string) bool {
	_, err := os.Stat(filepath.Join(root, ".claude-plugin", "plugin.json"))
	return !errors.Is(err, fs.ErrNotExist)
}

// marketFile is the File of the servers p's marketplace entry defines.
func (p plugin) marketFile() File {
	return File{Client: p.client, Path: p.entryFile, Shape: ShapeMarketplace, Source: p.source,
		NoWrap: userFileWhyNot(p.entryFile, p.managed, "a marketplace file"),
		market: []marketPlugin{{name: p.name, source: p.source, disabled: p.disabled}}}
}

// mergeMarketFiles makes one File of the marketplace Files that name the
// same marketplace.json, so that wrap plans each file once, and lists
// each plugin's entry in it once (a plugin installed in several scopes
// has one entry, whose servers Claude Code starts once).
func mergeMarketFiles(files []File) []File {
	var out []File
	at := map[string]int{}
	for _, f := range files {
		if f.Shape != ShapeMarketplace || f.err != "" {
			out = append(out, f)
			continue
		}
		if i, ok := at[f.Path]; ok {
			for _, mp := range f.market {
				if !out[i].hasMarketPlugin(mp.name) {
					out[i].market = append(out[i].market, mp)
					out[i].Source = "marketplace entries"
				}
			}
			continue
		}
		at[f.Path] = len(out)
		out = append(out, f)
	}
	return out
}

// hasMarketPlugin reports whether f lists the entry of plugin name.
func (f File) hasMarketPlugin(name string) bool {
	for _, mp := range f.market {
		if mp.name == name {
			return true
		}
	}
	return false
}

// parseMarketplaceDoc reads the servers the entries of the plugins in
// market define in a marketplace.json. Each plugin must be listed exactly
// once; its servers are named and sourced as its own.
func parseMarketplaceDoc(src []byte, market []marketPlugin) (*jsonDoc, error) {
	d, err := newJSONDoc(src)
	if err != nil {
		return nil, err
	}
	for _, mp := range market {
		entry, i, err := marketEntry(d.root, mp.name)
		if err != nil {
			return nil, err
		}
		s, err := entry.Get("mcpServers")
		if err != nil {
			return nil, err
		}
		if s == nil {
			continue // the entry changed since discovery: nothing to read
		}
		from := len(d.list)
		if err := d.collectNode(ShapeMCPServers, s.Value, []string{"plugins", indexKey(i), "mcpServers"}, "user"); err != nil {
			return nil, err
		}
		for _, e := range d.list[from:] {
			e.source, e.namePrefix = mp.source, "plugin:"+mp.name+":"
			e.Disabled = e.Disabled || mp.disabled
		}
	}
	return d, nil
}

// prefixed is the name wrap gives the entry's server with --name: the
// entry's own plugin's prefix, else its file's.
func (e *Entry) prefixed(f File) string {
	if e.namePrefix != "" {
		return e.namePrefix + e.Name
	}
	return f.namePrefix + e.Name
}
