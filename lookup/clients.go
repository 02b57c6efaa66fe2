package lookup

// A client's config, as the README documents it.
type client struct {
	file   string
	format string // "mcpServers", "vscode" or "codex"
}

var clients = map[string]client{
	"claude-desktop": {file: "claude_desktop_config.json (Settings > Developer > Edit Config)", format: "mcpServers"},
	"claude-code":    {file: ".mcp.json in the project, or ~/.claude.json", format: "mcpServers"},
	"cursor":         {file: "~/.cursor/mcp.json, or .cursor/mcp.json in the project", format: "mcpServers"},
	"windsurf":       {file: "~/.codeium/windsurf/mcp_config.json", format: "mcpServers"},
	"cline":          {file: "cline_mcp_settings.json (Cline > MCP Servers > Configure)", format: "mcpServers"},
	"gemini-cli":     {file: "~/.gemini/settings.json", format: "mcpServers"},
	"vscode":         {file: ".vscode/mcp.json in the workspace, or the user mcp.json", format: "vscode"},
	"codex":          {file: "~/.codex/config.toml", format: "codex"},
}

// steps is mcpseal's own instructions for the client.
func (c client) steps() []string {
	steps := []string{
		"Install mcpseal (go install github.com/mcpseal/mcpseal/cmd/mcpseal@latest) and note the binary's absolute path (command -v mcpseal).",
		"Open " + c.file + ".",
	}
	switch c.format {
	case "vscode":
		steps = append(steps,
			`For each stdio server under "servers", set "command" to the mcpseal binary and put "run", "--name", NAME, "--" before the original command and its arguments in "args".`,
			`Example: {"servers": {"memory": {"type": "stdio", "command": "/home/me/go/bin/mcpseal", "args": ["run", "--name", "memory", "--", "npx", "-y", "@modelcontextprotocol/server-memory"]}}}`)
	case "codex":
		steps = append(steps,
			`For each [mcp_servers.NAME] table, set command to the mcpseal binary and args to ["run", "--name", "NAME", "--", original command, original args...].`,
			`Example: [mcp_servers.memory] command = "/home/me/go/bin/mcpseal" args = ["run", "--name", "memory", "--", "npx", "-y", "@modelcontextprotocol/server-memory"]`)
	default:
		steps = append(steps,
			`For each stdio server under "mcpServers", set "command" to the mcpseal binary and put "run", "--name", NAME, "--" before the original command and its arguments in "args".`,
			`Example: {"mcpServers": {"memory": {"command": "/home/me/go/bin/mcpseal", "args": ["run", "--name", "memory", "--", "npx", "-y", "@modelcontextprotocol/server-memory"]}}}`)
	}
	return append(steps,
		"Restart the client. The first session pins each server's contract; later sessions are checked and blocked on any change.",
		"When a session is blocked, review the change in a terminal with 'mcpseal review ID' and accept it with 'mcpseal approve ID'.",
		"Remote (URL) servers are not gated by this release.")
}
