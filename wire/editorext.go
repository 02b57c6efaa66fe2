package wire

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/BurntSushi/toml"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// Editor extensions that bring MCP servers (checked 2026-12-01 against
// VS Code's extension API reference and Zed's extension documentation):
//
//   - VS Code (and its forks Cursor and Windsurf) extensions declare
//     contributes.mcpServerDefinitionProviders in their package.json and
//     define the servers in code when the editor asks
//     (vscode.lm.registerMcpServerDefinitionProvider). Nothing on disk says
//     what they launch, so mcpseal can neither read nor wrap them: each
//     provider is counted as one not-wrapped entry. Extensions live in
//     ~/.vscode/extensions ($VSCODE_EXTENSIONS when set),
//     ~/.vscode-insiders/extensions, ~/.cursor/extensions and
//     ~/.windsurf/extensions, one folder each.
//   - Zed extensions declare [context_servers.NAME] in extension.toml and
//     start the server from their own code (WebAssembly): counted the
//     same way. They live in $XDG_DATA_HOME/zed/extensions/installed
//     (~/.local/share/zed/...) on Linux, ~/Library/Application
//     Support/Zed/extensions/installed on macOS and
//     %LOCALAPPDATA%\Zed\extensions\installed on Windows.

// The read-only shapes of editor extension manifests.
const (
	// ShapeVSCodeExtension: an extension's package.json.
	ShapeVSCodeExtension Shape = "vscode-extension"
	// ShapeZedExtension: a Zed extension's extension.toml.
	ShapeZedExtension Shape = "zed-extension"
)

const editorExtWhy = "an editor extension defines this server in its own code: mcpseal cannot see what it launches, or wrap it"

// EditorExtensionFiles lists the manifests of the editor extensions that
// bring MCP servers.
func EditorExtensionFiles(e Env) []File {
	vscode := filepath.Join(e.Home, ".vscode", "extensions")
	if d := e.getenv("VSCODE_EXTENSIONS"); d != "" && filepath.IsAbs(d) {
		vscode = d
	}
	var out []File
	for _, x := range []struct{ client, dir string }{
		{"vscode", vscode},
		{"vscode", filepath.Join(e.Home, ".vscode-insiders", "extensions")},
		{"cursor", filepath.Join(e.Home, ".cursor", "extensions")},
		{"windsurf", filepath.Join(e.Home, ".windsurf", "extensions")},
	} {
		out = append(out, extensionManifests(x.client, x.dir, "package.json", ShapeVSCodeExtension)...)
	}
	zed := filepath.Join(e.getenvOr("XDG_DATA_HOME", filepath.Join(e.Home, ".local", "share")), "zed", "extensions", "installed")
	switch e.GOOS {
	case "darwin":
		zed = filepath.Join(e.Home, "Library", "Application Support", "Zed", "extensions", "installed")
	case "windows":
		zed = filepath.Join(e.getenvOr("LOCALAPPDATA", filepath.Join(e.Home, "AppData", "Local")), "Zed", "extensions", "installed")
	}
	return append(out, extensionManifests("zed", zed, "extension.toml", ShapeZedExtension)...)
}

// getenvOr is getenv(k) when it is an absolute path, def otherwise.
func (e Env) getenvOr(k, def string) string {
	if v := e.getenv(k); v != "" && filepath.IsAbs(v) {
		return v
	}
	return def
}

// extensionManifests lists the manifests in dir's extension folders that
// declare servers; one that cannot be read is reported.
func extensionManifests(client, dir, manifest string, shape Shape) []File {
	dirs, err := subdirs(dir)
	if err != nil {
		return []File{indexError(client, dir, "extensions", "cannot list the extensions: "+errText(err))}
	}
	var out []File
	for _, d := range dirs {
		p := filepath.Join(d, manifest)
		src, err := atomicfile.ReadFileFollow(p, maxIndexSize)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		f := File{Client: client, Path: p, Shape: shape, Source: "extension " + filepath.Base(d), NoWrap: editorExtWhy}
		if err != nil {
			f.err = "cannot read the extension's manifest: " + errText(err)
			out = append(out, f)
			continue
		}
		doc, err := parseExtensionDoc(shape, src)
		if err != nil {
			f.err = "the extension's manifest: " + err.Error()
			out = append(out, f)
			continue
		}
		if len(doc.list) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// extDoc is an extension manifest read for the servers it declares; it is
// never edited.
type extDoc struct {
	v    any
	list []*docEntry
}

func (d *extDoc) entries() []*docEntry { return d.list }
func (d *extDoc) value() any           { return d.v }

// maxExtServers bounds the servers one extension may declare.
const maxExtServers = 64

// parseExtensionDoc reads the servers an extension manifest declares.
func parseExtensionDoc(shape Shape, src []byte) (*extDoc, error) {
	d := &extDoc{}
	add := func(name string) error {
		if len(d.list) >= maxExtServers {
			return errors.New("more servers than mcpseal reads")
		}
		d.list = append(d.list, &docEntry{Entry: Entry{Name: name, Scope: "user", Kind: Other, Why: editorExtWhy, where: []string{name}}})
		return nil
	}
	switch shape {
	case ShapeVSCodeExtension:
		root, err := ParseJSONC(src)
		if err != nil {
			return nil, err
		}
		if root.Kind != Object {
			return nil, errors.New("not a JSON object")
		}
		d.v = root.Value()
		c, err := root.Get("contributes")
		if err != nil || c == nil {
			return d, err
		}
		p, err := c.Value.Get("mcpServerDefinitionProviders")
		if err != nil || p == nil || p.Value.Kind == Null {
			return d, err
		}
		if p.Value.Kind != Array {
			return nil, errors.New("mcpServerDefinitionProviders is not a list")
		}
		seen := map[string]bool{}
		for _, el := range p.Value.Elems {
			id, ok, err := stringMember(el, "id")
			if err != nil || !ok || id == "" {
				return nil, errors.New("a server definition provider without an id")
			}
			if seen[id] {
				return nil, fmt.Errorf("%w: provider %q", errDuplicateKey, id)
			}
			seen[id] = true
			if err := add(id); err != nil {
				return nil, err
			}
		}
	case ShapeZedExtension:
		var m map[string]any
		if _, err := toml.Decode(string(src), &m); err != nil {
			return nil, errors.New("not valid TOML")
		}
		d.v = m
		cs, ok := m["context_servers"]
		if !ok {
			return d, nil
		}
		servers, ok := cs.(map[string]any)
		if !ok {
			return nil, errors.New("context_servers is not a table")
		}
		names := make([]string, 0, len(servers))
		for n := range servers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if err := add(n); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("unknown shape %q", shape)
	}
	return d, nil
}
