package wire

import (
	"strings"
	"testing"
)

// TestUserFilesPerOS: the documented paths on each OS (docs/clients.md).
func TestUserFilesPerOS(t *testing.T) {
	env := map[string]string{"APPDATA": "/w/AppData/Roaming"}
	cases := []struct {
		goos, client, want string
	}{
		{"linux", "claude-desktop", "/h/.config/Claude/claude_desktop_config.json"},
		{"darwin", "claude-desktop", "/h/Library/Application Support/Claude/claude_desktop_config.json"},
		{"windows", "claude-desktop", "/w/AppData/Roaming/Claude/claude_desktop_config.json"},
		{"linux", "claude-code", "/h/.claude.json"},
		{"linux", "cursor", "/h/.cursor/mcp.json"},
		{"linux", "vscode", "/h/.config/Code/User/mcp.json"},
		{"darwin", "vscode", "/h/Library/Application Support/Code/User/mcp.json"},
		{"windows", "vscode", "/w/AppData/Roaming/Code/User/mcp.json"},
		{"linux", "windsurf", "/h/.codeium/windsurf/mcp_config.json"},
		{"linux", "cline", "/h/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"},
		{"linux", "gemini", "/h/.gemini/settings.json"},
		{"linux", "zed", "/h/.config/zed/settings.json"},
		{"darwin", "zed", "/h/.config/zed/settings.json"},
		{"windows", "zed", "/w/AppData/Roaming/Zed/settings.json"},
		{"linux", "codex", "/h/.codex/config.toml"},
	}
	for _, c := range cases {
		files := UserFiles(Env{GOOS: c.goos, Home: "/h", Getenv: func(k string) string { return env[k] }})
		found := false
		for _, f := range files {
			if f.Client == c.client && f.Path == c.want {
				found = true
			}
		}
		if !found {
			t.Errorf("%s %s: %s not among the candidates", c.goos, c.client, c.want)
		}
	}
	moved := map[string]string{"CODEX_HOME": "/c", "CLAUDE_CONFIG_DIR": "/cc", "XDG_CONFIG_HOME": "/x"}
	var paths []string
	for _, f := range UserFiles(Env{GOOS: "linux", Home: "/h", Getenv: func(k string) string { return moved[k] }}) {
		paths = append(paths, f.Path)
	}
	for _, want := range []string{"/c/config.toml", "/cc/.claude.json", "/x/Code/User/mcp.json", "/x/zed/settings.json"} {
		if !strings.Contains(strings.Join(paths, "\n"), want) {
			t.Errorf("%s not among %v", want, paths)
		}
	}
}

// TestSyntaxErrorsNeverQuoteTheFile: a config may hold secrets; errors
// name a place, never the text.
func TestSyntaxErrorsNeverQuoteTheFile(t *testing.T) {
	for _, src := range []string{
		`{"k": "sk-SECRET" "x": 1}`,
		`{"k": sk-SECRET}`,
		`{"sk-SECRET"}`,
		`{"k": "sk-SECRET`,
		`/* sk-SECRET`,
		`{"k": "sk-SECRET\q"}`,
	} {
		_, err := ParseJSONC([]byte(src))
		if err == nil {
			t.Errorf("%q parsed", src)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%q: error %q quotes the file", src, err)
		}
	}
	_, err := parseTOMLDoc([]byte("token = \"sk-SECRET\"\nbad = = 1\n"))
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("TOML error %v", err)
	}
}

// TestDuplicateServerNameIsNotEdited: which of two same-named entries a
// client reads is not certain; mcpseal edits neither.
func TestDuplicateServerNameIsNotEdited(t *testing.T) {
	_, err := parseJSONDoc(ShapeMCPServers, []byte(`{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`))
	if err == nil {
		t.Error("duplicate server names accepted")
	}
}

// TestJSONCAccepts: what VS Code, Zed and Gemini accept in settings files.
func TestJSONCAccepts(t *testing.T) {
	for _, src := range []string{
		"\xEF\xBB\xBF{}",
		"// c\n{\"a\": [1, 2,], /* x */}",
		`{"a": -0.5e+10, "b": "\u00e9\n"}`,
	} {
		if _, err := ParseJSONC([]byte(src)); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
	for _, src := range []string{`{'a': 1}`, `{a: 1}`, `[NaN]`, `[01]`, `{"a": 1,,}`, `[1 2]`, ``, `{} {}`} {
		if _, err := ParseJSONC([]byte(src)); err == nil {
			t.Errorf("%q accepted", src)
		}
	}
}
