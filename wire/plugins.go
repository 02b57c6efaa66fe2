package wire

import (
	"os"
	"path/filepath"
	"strings"
)

// plugin is one installed plugin whose servers pluginServers lists.
type plugin struct {
	client string
	// root is the folder the client reads the plugin from.
	root string
	// manifests are the manifest paths under root the client reads, in
	// order (.claude-plugin/plugin.json when empty).
	manifests []string
	// managed is the client's own plugin folder: a file in it is never
	// the user's to edit.
	managed string
	source  string // "plugin ID", for status
	name    string // the plugin's name, for --name
	// noWrap, when set, says why wrap never edits the plugin's files;
	// empty means each file is checked (userFileWhyNot).
	noWrap   string
	disabled bool
	// entry, when set, is the mcpServers of the plugin's marketplace
	// entry, in the file entryFile: Claude Code reads it when the plugin
	// has no manifest of its own (claudemarket.go).
	entry     *Node
	entryFile string
}

// pluginServers lists the server files of a plugin: .mcp.json at its
// root ({"mcpServers": {...}} or the servers at the top level), and the
// mcpServers member of its manifest: an object of servers, a path
// (relative to the root) of another such file, or a list of paths.
func pluginServers(p plugin) []File {
	mk := func(path string, shape Shape) File {
		f := File{Client: p.client, Path: path, Shape: shape, Source: p.source, NoWrap: p.noWrap, Disabled: p.disabled,
			namePrefix: "plugin:" + p.name + ":"}
		if f.NoWrap == "" {
			f.NoWrap = userFileWhyNot(path, p.managed, "a plugin file")
		}
		if f.NoWrap == "" && !linksWithin(path, p.root) {
			// A link out of the plugin (to another client's config, say)
			// is counted where the client reads it, never edited as the
			// plugin's.
			f.NoWrap = "a plugin file that links outside the plugin's folder"
		}
		return f
	}
	var out []File
	mcp := filepath.Join(p.root, ".mcp.json")
	if _, err := os.Lstat(mcp); err == nil {
		out = append(out, mk(mcp, ShapePluginServers))
	}
	manifests := p.manifests
	if len(manifests) == 0 {
		manifests = []string{filepath.Join(".claude-plugin", "plugin.json")}
	}
	for _, rel := range manifests {
		manifest := filepath.Join(p.root, rel)
		m, present, err := readIndex(manifest, maxIndexSize)
		if err != nil {
			return append(out, indexError(p.client, manifest, p.source, "cannot read the plugin's manifest: "+errText(err)))
		}
		if !present {
			if p.entry != nil && len(p.manifests) == 0 {
				// No plugin.json: Claude Code takes the marketplace entry
				// as the manifest.
				servers, ok := p.serverRefs(p.entry, p.entryFile, mcp, mk)
				if !ok {
					return append(out, servers...)
				}
				out = append(out, servers...)
			}
			continue
		}
		servers, err := m.Get("mcpServers")
		if err != nil {
			return append(out, indexError(p.client, manifest, p.source, "the plugin's manifest: "+err.Error()))
		}
		if servers == nil {
			continue
		}
		files, ok := p.serverRefs(servers.Value, manifest, mcp, mk)
		if !ok {
			return append(out, files...)
		}
		out = append(out, files...)
	}
	return out
}

// pluginPath is the file a path in a plugin's mcpServers names, as
// Claude Code 2.1.328 accepts it in plugin.json and in a marketplace
// entry alike: relative to the plugin's root and starting with "./"
// (its manifest schema refuses anything else, an absolute path too, and
// the plugin then starts nothing from it), and mcpseal further takes
// only one that stays inside the root. ok is false for any other path:
// the caller reports the manifest unreadable, and no file outside the
// plugin, another client's config for one, is read as the plugin's.
func pluginPath(root, ref string) (path string, ok bool) {
	if !strings.HasPrefix(ref, "./") {
		return "", false
	}
	rel := filepath.Clean(filepath.FromSlash(ref))
	if rel == "." || rel == ".." || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" ||
		strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.Join(root, rel), true
}

// linksWithin reports whether path, links resolved, is inside root,
// links resolved.
func linksWithin(path, root string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	r, err := filepath.EvalSymlinks(root)
	return err == nil && within(real, r)
}

// serverRefs lists the server files an mcpServers value in file names:
// file itself when the value holds servers, else the files of its path or
// list of paths (relative to the plugin's root; mcp, read already, is not
// listed twice). ok is false when the value is neither: the one File then
// says so.
func (p plugin) serverRefs(servers *Node, file, mcp string, mk func(string, Shape) File) (files []File, ok bool) {
	var refs []*Node
	switch servers.Kind {
	case Null:
		return nil, true
	case Object:
		if file == p.entryFile {
			return []File{p.marketFile()}, true
		}
		return []File{mk(file, ShapeMCPServers)}, true
	case String:
		refs = []*Node{servers}
	case Array:
		refs = servers.Elems
	}
	if refs == nil || len(refs) > maxServerFiles {
		return []File{indexError(p.client, file, p.source, "the plugin's mcpServers is neither servers nor paths mcpseal reads")}, false
	}
	for _, r := range refs {
		if r.Kind != String || r.Str == "" {
			return []File{indexError(p.client, file, p.source, "the plugin's mcpServers lists something that is not a path")}, false
		}
		path, ok := pluginPath(p.root, r.Str)
		if !ok {
			return []File{indexError(p.client, file, p.source, "the plugin's mcpServers names a path Claude Code does not read (not ./ inside the plugin's folder)")}, false
		}
		if path != mcp {
			files = append(files, mk(path, ShapePluginServers))
		}
	}
	return files, true
}
