// Package wire puts mcpseal in front of the MCP servers that desktop and
// editor clients launch, by editing the clients' own config files, and
// reports honestly what is and is not covered.
//
// # What it owns
//
//   - Discovery: where each client keeps its config on Linux, macOS and
//     Windows (clients.go; docs/clients.md lists the paths and the date
//     they were checked), and the project configs a repository carries.
//   - Reading: a JSON-with-comments reader that remembers the byte span of
//     every value (jsonc.go) and a TOML scanner for Codex's config.toml
//     (toml.go), both cross-checked against a full decoder.
//   - Editing: minimal edits that replace only the bytes of an entry's
//     command and args (or, for a remote entry, its url and headers), so
//     that comments, key order and indentation survive. Every edit is
//     verified by parsing the result again and comparing it, value by
//     value, with what was meant: anything else in the file that would
//     change makes the edit fail and the file stay as it was.
//   - Wrap and unwrap plans (plan.go), applied with a backup of every file
//     and an atomic replace (apply.go), and a record of each entry's
//     original bytes so unwrap restores them exactly (records.go).
//   - Status (status.go): per server, protected, monitor-only, not
//     wrapped, broken, or baseline outside the state folder.
//   - Admin policies (policy.go) for Claude Code, VS Code / Copilot, Codex
//     and Cursor.
//
// # A worked example
//
// A Cursor config
//
//	{
//	  // my servers
//	  "mcpServers": {
//	    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] }
//	  }
//	}
//
// becomes, after wrap,
//
//	{
//	  // my servers
//	  "mcpServers": {
//	    "memory": { "command": "/usr/local/bin/mcpseal", "args": ["run", "--name", "memory", "--", "npx", "-y", "@modelcontextprotocol/server-memory"] }
//	  }
//	}
//
// and unwrap gives back the first file byte for byte. The launch line is
// read back with the real `mcpseal run` flag set (RunSyntax), so status
// calls a line broken exactly when mcpseal would refuse it.
//
// The package reads and writes files; it never starts a server, and it
// never copies text from a config into anything a model reads.
package wire

import (
	"time"
)

// Shape is the layout of the MCP servers in a config file.
type Shape string

// The config shapes mcpseal reads and edits.
const (
	// ShapeMCPServers: {"mcpServers": {NAME: {"command": ..., "args": [...]}}}
	// (Claude Desktop, Cursor, Windsurf, Cline, Gemini CLI, Claude Code's
	// .mcp.json).
	ShapeMCPServers Shape = "mcpServers"
	// ShapeClaudeCode: ~/.claude.json, with user servers in mcpServers and
	// per-folder servers in projects.<dir>.mcpServers.
	ShapeClaudeCode Shape = "claude-code"
	// ShapeVSCode: {"servers": {NAME: {"type": "stdio", ...}}}, JSONC.
	ShapeVSCode Shape = "vscode"
	// ShapeZed: {"context_servers": {NAME: {"command": ..., "args": [...]}}},
	// JSONC.
	ShapeZed Shape = "zed"
	// ShapeCodex: TOML tables [mcp_servers.NAME].
	ShapeCodex Shape = "codex"
	// ShapePluginServers: a Claude Code plugin's .mcp.json, either
	// {"mcpServers": {NAME: ...}} or the servers at the top level
	// ({NAME: {"command": ...}}), as Claude Code reads both.
	ShapePluginServers Shape = "plugin-servers"
	// ShapeMarketplace: a Claude Code marketplace's marketplace.json whose
	// plugin entries define servers themselves: {"plugins": [{"name": P,
	// "mcpServers": {NAME: ...}}]}. Only the entries of the installed
	// plugins listed in the File are read (File.market).
	ShapeMarketplace Shape = "claude-marketplace"
)

// File is one config file.
type File struct {
	// Client is the client's id ("cursor", "vscode", ...; "custom" for a
	// file named with --config).
	Client string `json:"client"`
	// Path is absolute.
	Path  string `json:"path"`
	Shape Shape  `json:"shape"`
	// Project marks a repository's shared config. It is counted and
	// reported, and edited only when the user asks (--project).
	Project bool `json:"project,omitempty"`
	// Source names the extension or plugin a client loads the file from
	// ("extension NAME", "plugin ID"); empty for a client's own config.
	Source string `json:"source,omitempty"`
	// NoWrap, when set, says why wrap never edits the file (a copy the
	// client replaces on update, a file an administrator owns): its
	// servers stay not-wrapped, and status says so.
	NoWrap string `json:"noWrap,omitempty"`
	// Disabled: the client has the extension or plugin turned off.
	Disabled bool `json:"disabled,omitempty"`

	// namePrefix goes before each server's name in the --name wrap writes,
	// so that a plugin's server is not confused with a user's of the same
	// name ("plugin:P:", as Claude Code names them).
	namePrefix string
	// err says why discovery could not tell which servers this file
	// stands for (an index that cannot be read): status reports it as
	// unreadable, and its servers are unknown.
	err string
	// market lists, for ShapeMarketplace, the installed plugins whose
	// entries in the file define their servers.
	market []marketPlugin
}

// marketPlugin is an installed plugin whose marketplace entry defines
// its servers.
type marketPlugin struct {
	name     string // the plugin's name in the entry
	source   string // "plugin ID", for status
	disabled bool
}

// Kind says how a client reaches a server.
type Kind string

// The kinds of entries.
const (
	Stdio  Kind = "stdio"  // a command the client starts
	Remote Kind = "remote" // a URL the client connects to
	Other  Kind = "other"  // neither, or a form mcpseal does not edit
)

// Entry is one server in a config file.
type Entry struct {
	Name string `json:"name"`
	// Scope is "user", or "project DIR" for a Claude Code per-folder server.
	Scope string `json:"scope"`
	Kind  Kind   `json:"kind"`
	// Command and Args are the launch line of a stdio entry.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// URL, Transport ("http" or "sse") and Headers describe a remote entry.
	URL       string            `json:"url,omitempty"`
	Transport string            `json:"transport,omitempty"`
	Headers   map[string]string `json:"-"`
	// Env is the entry's environment, when it sets one.
	Env      map[string]string `json:"-"`
	Disabled bool              `json:"disabled,omitempty"`
	// Why says, for an Other entry, why mcpseal leaves it alone.
	Why string `json:"why,omitempty"`
	// EnvCredential names what a remote entry takes its credential from
	// (an environment variable, a header with a variable in it): wrap
	// cannot move such a credential into a file and leaves the entry alone.
	EnvCredential string `json:"-"`

	// source and namePrefix, when set, stand in for the File's: one
	// marketplace.json holds the servers of several plugins.
	source, namePrefix string

	// where locates the entry in its file: JSON object keys from the root,
	// or the TOML table keys.
	where []string
}

// key is the entry's stable id inside its file.
func (e *Entry) key() string {
	b := make([]byte, 0, 64)
	for i, w := range e.where {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, w...)
	}
	return string(b)
}

// Options are what wrap, unwrap and status need from the command.
type Options struct {
	// Self is the absolute path of the mcpseal binary to put in launch lines.
	Self string
	// Home is $MCPSEAL_HOME: backups, records and credentials live there,
	// and wrapped lines name it with --home.
	Home string
	// DefaultHome is where mcpseal keeps its state when MCPSEAL_HOME is
	// not set (~/.mcpseal): where a wrapped line without --home puts its
	// pins when the client passes no MCPSEAL_HOME on.
	DefaultHome string
	// Lock, when set, is added to every wrapped line as --lock.
	Lock string
	// Posture, when set, is added as --posture.
	Posture string
	// SkipRemote leaves remote entries alone.
	SkipRemote bool
	// Run reads launch lines with the real `mcpseal run` flag set.
	Run RunSyntax
	// Now is the clock (backup folder names, record times).
	Now func() time.Time
}

// maxConfigSize bounds a config file mcpseal reads. ~/.claude.json keeps
// per-project history and grows to tens of megabytes on busy machines;
// 64 MiB is above any real one and keeps a planted file from exhausting
// memory.
const maxConfigSize = 64 << 20
