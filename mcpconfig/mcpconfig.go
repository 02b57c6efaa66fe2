// Package mcpconfig reads the MCP server configs that clients keep in a
// project or a user's home, read-only: the mcpServers shape (Claude Code's
// .mcp.json, Claude Desktop, Cursor, Windsurf, Cline, Gemini CLI), VS
// Code's servers shape (.vscode/mcp.json) and VS Code settings
// ({"mcp": {"servers": ...}}). Comments and trailing commas, which VS
// Code's files allow, are accepted.
//
// Values are kept as written. [Server.Expand] fills in ${VAR},
// ${VAR:-default}, ${env:VAR} and ${workspaceFolder} from the environment
// the way clients do, for the moment a server is started; a lock records
// the command as written, so it is the same on every machine.
//
// # Example
//
//	{"mcpServers": {"files": {"command": "npx",
//	  "args": ["-y", "@modelcontextprotocol/server-filesystem", "${PROJECT_DIR:-.}"]}}}
//
// Parse returns one Server named "files" with Args[2] "${PROJECT_DIR:-.}";
// Expand turns it into "." when PROJECT_DIR is unset.
//
// A server already wrapped by mcpseal (command mcpseal, arguments
// "run ... -- COMMAND ARGS...") is read as the command it wraps; see
// [Server.Unwrap].
package mcpconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mcpseal/mcpseal/canon"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// MaxConfigSize bounds a config file. Real configs are a few KiB; VS Code
// settings files can be larger, but not by orders of magnitude.
const MaxConfigSize = 4 << 20

// maxServers bounds the servers one config may name.
const maxServers = 1000

// Shapes of config files.
const (
	ShapeMCPServers = "mcpServers"  // {"mcpServers": {...}}
	ShapeServers    = "servers"     // VS Code mcp.json: {"servers": {...}}
	ShapeSettings   = "mcp.servers" // VS Code settings: {"mcp": {"servers": {...}}}
)

// ErrInvalid: the file is not a config this package can read.
var ErrInvalid = errors.New("mcpconfig: invalid config")

// Config is a parsed config file.
type Config struct {
	Shape   string
	Servers []Server // sorted by name
}

// Server is one server entry, as written.
type Server struct {
	Name string
	// Type is "stdio", "http", "sse" or another transport name; "" when
	// the entry does not say.
	Type    string
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	URL     string
}

// Local reports whether the server is started as a local process
// (stdio), as opposed to reached over the network.
func (s *Server) Local() bool {
	return s.Command != "" && (s.Type == "" || s.Type == "stdio")
}

// Lookup returns the server called name.
func (c *Config) Lookup(name string) (*Server, bool) {
	for i := range c.Servers {
		if c.Servers[i].Name == name {
			return &c.Servers[i], true
		}
	}
	return nil, false
}

// Load reads and parses the config at path. A final link is followed
// (the config is the project's, as a person wrote it), but a FIFO or
// device is refused without blocking.
func Load(path string) (*Config, error) {
	data, err := atomicfile.ReadFileFollow(path, MaxConfigSize)
	if errors.Is(err, atomicfile.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalid, path, MaxConfigSize)
	}
	if err != nil {
		return nil, err
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse reads a config. It refuses repeated member names (clients
// disagree about which copy wins), more than one shape in one file, and
// entries whose members have the wrong types.
func Parse(data []byte) (*Config, error) {
	clean, err := stripJSONC(data)
	if err != nil {
		return nil, err
	}
	if _, err := canon.Transform(clean); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(clean, &top); err != nil {
		return nil, fmt.Errorf("%w: the file is not a JSON object", ErrInvalid)
	}
	var shapes []string
	var servers json.RawMessage
	if v, ok := top["mcpServers"]; ok {
		shapes, servers = append(shapes, ShapeMCPServers), v
	}
	if v, ok := top["servers"]; ok {
		shapes, servers = append(shapes, ShapeServers), v
	}
	if v, ok := top["mcp"]; ok {
		var mcp map[string]json.RawMessage
		if json.Unmarshal(v, &mcp) == nil && mcp["servers"] != nil {
			shapes, servers = append(shapes, ShapeSettings), mcp["servers"]
		}
	}
	switch len(shapes) {
	case 0:
		return nil, fmt.Errorf("%w: no mcpServers, servers or mcp.servers member", ErrInvalid)
	case 1:
	default:
		return nil, fmt.Errorf("%w: the file has both %s; which one a client reads depends on the client", ErrInvalid, strings.Join(shapes, " and "))
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(servers, &entries); err != nil {
		return nil, fmt.Errorf("%w: %s is not an object of servers", ErrInvalid, shapes[0])
	}
	if len(entries) > maxServers {
		return nil, fmt.Errorf("%w: more than %d servers", ErrInvalid, maxServers)
	}
	c := &Config{Shape: shapes[0]}
	for name, raw := range entries {
		s, err := parseEntry(name, raw)
		if err != nil {
			return nil, err
		}
		c.Servers = append(c.Servers, s)
	}
	slices.SortFunc(c.Servers, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	return c, nil
}

func parseEntry(name string, raw json.RawMessage) (Server, error) {
	if name == "" || strings.IndexFunc(name, unicode.IsControl) >= 0 || len(name) > 256 {
		return Server{}, fmt.Errorf("%w: a server name is empty, too long or holds control characters", ErrInvalid)
	}
	bad := func(what string) error {
		return fmt.Errorf("%w: server %s: %s", ErrInvalid, strconv.Quote(name), what)
	}
	// Members are matched exactly, as JavaScript clients match them
	// (encoding/json would also take "Command" for "command").
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return Server{}, bad("not an object")
	}
	s := Server{Name: name, Env: map[string]string{}}
	for key, dst := range map[string]*string{"type": &s.Type, "command": &s.Command, "cwd": &s.Cwd, "url": &s.URL} {
		if v, ok := m[key]; ok && string(v) != "null" {
			if json.Unmarshal(v, dst) != nil {
				return Server{}, bad(key + " must be a string")
			}
		}
	}
	if v, ok := m["args"]; ok && string(v) != "null" {
		if json.Unmarshal(v, &s.Args) != nil {
			return Server{}, bad("args must be a list of strings")
		}
	}
	if v, ok := m["env"]; ok && string(v) != "null" {
		var env map[string]json.RawMessage
		if json.Unmarshal(v, &env) != nil {
			return Server{}, bad("env must be an object of strings")
		}
		for k, raw := range env {
			var val string
			if json.Unmarshal(raw, &val) != nil {
				return Server{}, bad("env " + strconv.Quote(k) + " must be a string")
			}
			s.Env[k] = val
		}
	}
	if _, ok := m["envFile"]; ok && s.Local() {
		return Server{}, bad("envFile is not supported: the variables it sets could not be locked; set them in env")
	}
	if s.Command == "" && s.URL == "" {
		return Server{}, bad("neither a command nor a url")
	}
	return s, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
