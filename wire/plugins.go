package wire

import (
	"os"
	"path/filepath"
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
			continue
		}
		servers, err := m.Get("mcpServers")
		if err != nil {
			return append(out, indexError(p.client, manifest, p.source, "the plugin's manifest: "+err.Error()))
		}
		if servers == nil || servers.Value.Kind == Null {
			continue
		}
		var refs []*Node
		switch servers.Value.Kind {
		case Object:
			out = append(out, mk(manifest, ShapeMCPServers))
			continue
		case String:
			refs = []*Node{servers.Value}
		case Array:
			refs = servers.Value.Elems
		}
		if refs == nil || len(refs) > maxServerFiles {
			return append(out, indexError(p.client, manifest, p.source, "the plugin's mcpServers is neither servers nor paths mcpseal reads"))
		}
		for _, r := range refs {
			if r.Kind != String || r.Str == "" {
				return append(out, indexError(p.client, manifest, p.source, "the plugin's mcpServers lists something that is not a path"))
			}
			path := r.Str
			if !filepath.IsAbs(path) {
				path = filepath.Join(p.root, path)
			}
			if path = filepath.Clean(path); path != mcp {
				out = append(out, mk(path, ShapePluginServers))
			}
		}
	}
	return out
}
