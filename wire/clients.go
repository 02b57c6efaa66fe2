package wire

import (
	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"os"
	"path/filepath"
	"strings"
)

// Where each client keeps its MCP servers, from each client's own
// documentation as of 2026-11-30 (docs/clients.md has the table and the
// sources).

// Env is what discovery reads of the machine.
type Env struct {
	// GOOS is "linux", "darwin" or "windows".
	GOOS string
	// Home is the user's home folder.
	Home string
	// Getenv reads the environment (APPDATA, XDG_CONFIG_HOME, CODEX_HOME,
	// CLAUDE_CONFIG_DIR).
	Getenv func(string) string
	// Dir is the folder the clients are started in (status's current
	// folder), when known: the Gemini CLI enables extensions per folder.
	Dir string
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// appData is where desktop apps keep settings: Application Support on
// macOS, %APPDATA% on Windows, $XDG_CONFIG_HOME (~/.config) elsewhere.
func (e Env) appData() string {
	switch e.GOOS {
	case "darwin":
		return filepath.Join(e.Home, "Library", "Application Support")
	case "windows":
		if a := e.getenv("APPDATA"); a != "" {
			return a
		}
		return filepath.Join(e.Home, "AppData", "Roaming")
	}
	return e.xdgConfig()
}

func (e Env) xdgConfig() string {
	if x := e.getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return x
	}
	return filepath.Join(e.Home, ".config")
}

// Clients names the clients mcpseal knows, for messages.
var Clients = map[string]string{
	"claude-desktop": "Claude Desktop",
	"claude-code":    "Claude Code",
	"cursor":         "Cursor",
	"vscode":         "VS Code",
	"windsurf":       "Windsurf",
	"cline":          "Cline",
	"gemini":         "Gemini CLI",
	"zed":            "Zed",
	"codex":          "Codex",
	"custom":         "--config",
}

// UserFiles lists every user-level config file the known clients may
// have on this machine, whether or not it exists.
func UserFiles(e Env) []File {
	code := filepath.Join(e.appData(), "Code", "User")
	zed := filepath.Join(e.xdgConfig(), "zed", "settings.json")
	if e.GOOS == "darwin" {
		zed = filepath.Join(e.Home, ".config", "zed", "settings.json")
	}
	if e.GOOS == "windows" {
		zed = filepath.Join(e.appData(), "Zed", "settings.json")
	}
	claudeCode := filepath.Join(e.Home, ".claude.json")
	if d := e.getenv("CLAUDE_CONFIG_DIR"); d != "" && filepath.IsAbs(d) {
		claudeCode = filepath.Join(e.claudeDir(), ".claude.json")
	}
	codex := e.codexDir()
	claudeFile := File{Client: "claude-code", Path: claudeCode, Shape: ShapeClaudeCode}
	if d := e.getenv("CLAUDE_CONFIG_DIR"); d != "" && !filepath.IsAbs(d) {
		// Claude Code reads it from the folder it runs in, which status
		// cannot know: never read the default in its place.
		claudeFile = indexError("claude-code", claudeCode, "", "CLAUDE_CONFIG_DIR is not an absolute path: mcpseal cannot tell which folder Claude Code reads")
	}
	codexFile := File{Client: "codex", Path: filepath.Join(codex, "config.toml"), Shape: ShapeCodex}
	if d := e.getenv("CODEX_HOME"); d != "" && !filepath.IsAbs(d) {
		codexFile = indexError("codex", filepath.Join(codex, "config.toml"), "", "CODEX_HOME is not an absolute path: mcpseal cannot tell which folder Codex reads")
	}
	return []File{
		{Client: "claude-desktop", Path: filepath.Join(e.appData(), "Claude", "claude_desktop_config.json"), Shape: ShapeMCPServers},
		claudeFile,
		{Client: "cursor", Path: filepath.Join(e.Home, ".cursor", "mcp.json"), Shape: ShapeMCPServers},
		{Client: "vscode", Path: filepath.Join(code, "mcp.json"), Shape: ShapeVSCode},
		{Client: "windsurf", Path: filepath.Join(e.Home, ".codeium", "windsurf", "mcp_config.json"), Shape: ShapeMCPServers},
		{Client: "cline", Path: filepath.Join(code, "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"), Shape: ShapeMCPServers},
		{Client: "cline", Path: filepath.Join(e.Home, ".cline", "data", "settings", "cline_mcp_settings.json"), Shape: ShapeMCPServers},
		e.geminiSettings(),
		{Client: "zed", Path: zed, Shape: ShapeZed},
		codexFile,
	}
}

// SystemFiles lists the files an administrator keeps servers in for
// every user of the machine (Claude Code's managed-mcp.json, the Gemini
// CLI's system settings): status counts them; wrap never edits them.
func SystemFiles(e Env) []File {
	managed := "/etc/claude-code/managed-mcp.json"
	switch e.GOOS {
	case "darwin":
		managed = "/Library/Application Support/ClaudeCode/managed-mcp.json"
	case "windows":
		managed = `C:\Program Files\ClaudeCode\managed-mcp.json`
	}
	files := []File{{Client: "claude-code", Path: managed, Shape: ShapeMCPServers, Source: "managed settings",
		NoWrap: "managed settings an administrator owns: wrap does not edit them ('mcpseal policy' writes the wrapped form)"}}
	return append(files, e.geminiSystemFiles()...)
}

// LoadedFiles lists the files clients load servers from besides their
// own configs: Gemini CLI extensions, Claude Code and Codex plugins, and
// editor extensions (VS Code, Cursor, Windsurf, Zed). Each names
// its source; one wrap may not edit says why in NoWrap; an index that
// cannot be read is a File whose status is unreadable.
func LoadedFiles(e Env) []File {
	files := append(GeminiExtensionFiles(e), ClaudePluginFiles(e)...)
	files = append(files, CodexPluginFiles(e)...)
	return append(files, EditorExtensionFiles(e)...)
}

// ProjectFiles lists the shared configs a repository at dir may carry.
func ProjectFiles(dir string) []File {
	return []File{
		{Client: "claude-code", Path: filepath.Join(dir, ".mcp.json"), Shape: ShapeMCPServers, Project: true},
		{Client: "cursor", Path: filepath.Join(dir, ".cursor", "mcp.json"), Shape: ShapeMCPServers, Project: true},
		{Client: "vscode", Path: filepath.Join(dir, ".vscode", "mcp.json"), Shape: ShapeVSCode, Project: true},
		{Client: "gemini", Path: filepath.Join(dir, ".gemini", "settings.json"), Shape: ShapeMCPServers, Project: true},
		{Client: "zed", Path: filepath.Join(dir, ".zed", "settings.json"), Shape: ShapeZed, Project: true},
		{Client: "codex", Path: filepath.Join(dir, ".codex", "config.toml"), Shape: ShapeCodex, Project: true},
	}
}

// maxProjectDirs bounds how many of the folders ~/.claude.json knows are
// scanned for project configs: a long-used machine knows hundreds, and a
// status run must stay quick.
const maxProjectDirs = 500

// KnownProjectDirs lists the folders Claude Code has opened (the keys of
// projects in ~/.claude.json), where project configs may be found.
func KnownProjectDirs(claudeJSON string) []string {
	src, err := atomicfile.ReadFileFollow(claudeJSON, maxConfigSize)
	if err != nil {
		return nil
	}
	dirs := claudeProjectDirs(src)
	var out []string
	for _, d := range dirs {
		if filepath.IsAbs(d) && len(out) < maxProjectDirs {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// Existing keeps the files that exist (or exist but cannot be read: they
// are reported).
func Existing(files []File) []File {
	var out []File
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f.Path] {
			continue
		}
		if _, err := os.Lstat(f.Path); err == nil || f.err != "" {
			seen[f.Path] = true
			out = append(out, f)
		}
	}
	return out
}

// ShapeOfFile reads a file named with --config (bounded) and guesses its
// shape.
func ShapeOfFile(path string) (Shape, error) {
	src, err := atomicfile.ReadFileFollow(path, maxConfigSize)
	if err != nil {
		return "", err
	}
	return ShapeOf(path, src), nil
}

// ShapeOf guesses the shape of a file named with --config: .toml is Codex;
// JSON with servers is VS Code, with context_servers Zed, with projects
// Claude Code; anything else the common mcpServers shape.
func ShapeOf(path string, src []byte) Shape {
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		return ShapeCodex
	}
	root, err := ParseJSONC(src)
	if err != nil || root.Kind != Object {
		return ShapeMCPServers
	}
	for _, c := range []struct {
		key   string
		shape Shape
	}{{"servers", ShapeVSCode}, {"context_servers", ShapeZed}, {"projects", ShapeClaudeCode}} {
		if m, _ := root.Get(c.key); m != nil {
			if c.key != "projects" {
				return c.shape
			}
			if mm, _ := root.Get("mcpServers"); mm != nil || strings.HasSuffix(path, ".claude.json") {
				return c.shape
			}
		}
	}
	return ShapeMCPServers
}
