package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/internal/launchline"
	"path/filepath"
	"slices"
	"strings"
)

// Admin policies: files an administrator deploys so that the clients run
// only the approved servers, and only through mcpseal. Every product
// compares the configured command line exactly (command and every
// argument, in order); none of them can see what the command does. That
// is what the lock file is for: the policy makes every approved server run
// through mcpseal, and mcpseal checks it against the organisation's lock.
//
// Secrets never go into a policy: an approved server's environment is
// forwarded by variable name only, and a remote server with headers is
// refused.

// Products lists the products policy knows, in output order.
var Products = []string{"claude-code", "vscode", "codex", "cursor"}

// Approved is one server an administrator approved.
type Approved struct {
	Name    string
	Command string
	Args    []string
	// EnvNames are the variables the server needs, forwarded by name.
	EnvNames []string
	URL      string
}

// maxApprovedSize bounds the approved-servers file: a few hundred servers
// of a few hundred bytes each; 16 MiB is far above any real list.
const maxApprovedSize = 16 << 20

// ReadApproved reads an approved-servers file: {"mcpServers": {...}} or
// VS Code's {"servers": {...}}, each server a command with args (and env,
// of which only the names are kept) or a url.
func ReadApproved(path string) ([]Approved, error) {
	src, err := atomicfile.ReadFileFollow(path, maxApprovedSize)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Base(path), err)
	}
	shape := ShapeMCPServers
	if root, err := ParseJSONC(src); err == nil {
		if m, _ := root.Get("servers"); m != nil {
			shape = ShapeVSCode
		}
	}
	doc, err := parseJSONDoc(shape, src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	var out []Approved
	for _, e := range doc.entries() {
		if !safePolicyName(e.Name) {
			return nil, fmt.Errorf("server name %q: use letters, digits, '-' and '_' only (every product matches names exactly)", e.Name)
		}
		a := Approved{Name: e.Name}
		switch e.Kind {
		case Stdio:
			a.Command, a.Args = e.Command, e.Args
			if _, ok := launchline.Split(e.Command, e.Args, ""); ok {
				return nil, fmt.Errorf("server %q is already wrapped: list the original command, policy wraps it", e.Name)
			}
		case Remote:
			if len(e.Headers) > 0 {
				return nil, fmt.Errorf("server %q has headers: a policy never carries secrets; give each machine its own credential", e.Name)
			}
			a.URL = e.URL
		default:
			return nil, fmt.Errorf("server %q: %s", e.Name, e.Why)
		}
		for k := range e.Env {
			a.EnvNames = append(a.EnvNames, k)
		}
		slices.Sort(a.EnvNames)
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no servers", filepath.Base(path))
	}
	slices.SortFunc(out, func(x, y Approved) int { return strings.Compare(x.Name, y.Name) })
	return out, nil
}

func safePolicyName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !isBareKeyByte(c) {
			return false
		}
	}
	return true
}

// PolicyOptions are the deployment facts a policy is written for.
type PolicyOptions struct {
	// Self is the absolute path of mcpseal on the managed machines.
	Self string
	// Lock is the absolute path of the organisation's lock on them.
	Lock string
	// NPX, when set, is the mcpseal version the launch lines run through
	// npx ("npx -y mcpseal@0.3.0 run …") instead of the binary at Self.
	NPX string
}

// launcher is the command and leading arguments that start mcpseal.
func (o PolicyOptions) launcher() []string {
	if o.NPX != "" {
		return append([]string{"npx"}, launchline.NPXArgs(o.NPX)...)
	}
	return []string{o.Self}
}

// ErrRelativePath refuses a path a policy would compare or read on other
// machines from an unknown folder.
var ErrRelativePath = errors.New("must be an absolute path: a policy runs on other machines, from folders nobody can predict")

// launch is the wrapped launch line of an approved server.
func (a Approved) launch(o PolicyOptions) []string {
	var args []string
	if a.URL != "" {
		args = []string{"run", "--url", a.URL, "--name", a.Name}
		if o.Lock != "" {
			args = append(args, "--lock", o.Lock)
		}
	} else {
		args = []string{"run", "--name", a.Name}
		if o.Lock != "" {
			args = append(args, "--lock", o.Lock)
		}
		args = append(append(args, "--"), a.Command)
		args = append(args, a.Args...)
	}
	return append(o.launcher(), args...)
}

// Policies returns the files for one product: name -> content.
func Policies(product string, approved []Approved, o PolicyOptions) (map[string][]byte, error) {
	switch {
	case o.NPX != "":
		if !launchline.ValidVersion(o.NPX) {
			return nil, fmt.Errorf("npx version %q is not an exact release version such as 0.3.0: a policy never lets the registry decide what runs", o.NPX)
		}
	case !filepath.IsAbs(o.Self):
		return nil, fmt.Errorf("the mcpseal path %w", ErrRelativePath)
	}
	if o.Lock != "" && !filepath.IsAbs(o.Lock) {
		return nil, fmt.Errorf("--lock %w", ErrRelativePath)
	}
	switch product {
	case "claude-code":
		return claudePolicy(approved, o)
	case "vscode":
		return vscodePolicy(approved, o)
	case "codex":
		return codexPolicy(approved, o), nil
	case "cursor":
		return cursorPolicy(approved, o), nil
	}
	return nil, fmt.Errorf("unknown product %q (claude-code, vscode, codex, cursor or all)", product)
}

// orderedJSON encodes a value with fixed member order, without HTML
// escaping, indented by two spaces.
func orderedJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type kv struct {
	k string
	v any
}

// object is a JSON object that keeps its member order.
type object []kv

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(m.k))
		b.WriteByte(':')
		v, err := orderedJSON(m.v)
		if err != nil {
			return nil, err
		}
		b.Write(bytes.TrimSpace(v))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// allowDeny is the allowedMcpServers / deniedMcpServers pair Claude Code
// and Copilot share: allow the exact wrapped lines, deny the originals.
func allowDeny(approved []Approved, o PolicyOptions) (allow, deny []object) {
	for _, a := range approved {
		allow = append(allow, object{{"serverCommand", a.launch(o)}})
		if a.URL != "" {
			deny = append(deny, object{{"serverUrl", a.URL}})
		} else {
			deny = append(deny, object{{"serverCommand", append([]string{a.Command}, a.Args...)}})
		}
	}
	return allow, deny
}

func claudePolicy(approved []Approved, o PolicyOptions) (map[string][]byte, error) {
	servers := object{}
	for _, a := range approved {
		line := a.launch(o)
		entry := object{{"type", "stdio"}, {"command", line[0]}, {"args", line[1:]}}
		if len(a.EnvNames) > 0 {
			env := object{}
			for _, n := range a.EnvNames {
				env = append(env, kv{n, "${" + n + "}"})
			}
			entry = append(entry, kv{"env", env})
		}
		servers = append(servers, kv{a.Name, entry})
	}
	mcp, err := orderedJSON(object{{"mcpServers", servers}})
	if err != nil {
		return nil, err
	}
	allow, deny := allowDeny(approved, o)
	settings, err := orderedJSON(object{{"allowManagedMcpServersOnly", true}, {"allowedMcpServers", allow}, {"deniedMcpServers", deny}})
	if err != nil {
		return nil, err
	}
	return map[string][]byte{"managed-mcp.json": mcp, "managed-settings.json": settings}, nil
}

func vscodePolicy(approved []Approved, o PolicyOptions) (map[string][]byte, error) {
	allow, deny := allowDeny(approved, o)
	settings, err := orderedJSON(object{{"allowedMcpServers", allow}, {"deniedMcpServers", deny}})
	if err != nil {
		return nil, err
	}
	return map[string][]byte{"managed-settings.json": settings}, nil
}

func codexPolicy(approved []Approved, o PolicyOptions) map[string][]byte {
	var req, cfg strings.Builder
	req.WriteString("# Codex requirements written by 'mcpseal policy codex'. Deploy as\n# /etc/codex/requirements.toml (Linux, macOS) or\n# %ProgramData%\\OpenAI\\Codex\\requirements.toml (Windows).\n# Only these servers run, each only under its name and with exactly this\n# command line.\n")
	cfg.WriteString("# The matching Codex config: each approved server, launched through mcpseal.\n# Merge into ~/.codex/config.toml (or deploy as /etc/codex/config.toml).\n")
	for _, a := range approved {
		line := a.launch(o)
		fmt.Fprintf(&req, "\n[mcp_servers.%s.identity.command]\nexecutable = %s\nargs = [\n", a.Name, tomlString(line[0]))
		for _, arg := range line[1:] {
			fmt.Fprintf(&req, "  { match = \"exact\", value = %s },\n", tomlString(arg))
		}
		req.WriteString("]\n")
		fmt.Fprintf(&cfg, "\n[mcp_servers.%s]\ncommand = %s\nargs = [", a.Name, tomlString(line[0]))
		for i, arg := range line[1:] {
			if i > 0 {
				cfg.WriteString(", ")
			}
			cfg.WriteString(tomlString(arg))
		}
		cfg.WriteString("]\n")
		if len(a.EnvNames) > 0 {
			cfg.WriteString("env_vars = [")
			for i, n := range a.EnvNames {
				if i > 0 {
					cfg.WriteString(", ")
				}
				cfg.WriteString(tomlString(n))
			}
			cfg.WriteString("]\n")
		}
	}
	return map[string][]byte{"requirements.toml": []byte(req.String()), "config.toml": []byte(cfg.String())}
}

func cursorPolicy(approved []Approved, o PolicyOptions) map[string][]byte {
	var b strings.Builder
	b.WriteString("# Cursor: text for the team dashboard (Settings > MCP), written by\n# 'mcpseal policy cursor'. Needs an Enterprise plan; turn off user MCP\n# extensions so that only these servers run.\n#\n# The exact wrapped launch line of each approved server:\n")
	for _, a := range approved {
		fmt.Fprintf(&b, "%s\n", shellLine(a.launch(o)))
	}
	b.WriteString("#\n# Or one entry that requires mcpseal for every server; with a lock, the\n# lock is then the approved catalogue:\n")
	wild := append(o.launcher(), "run", "--name", "*")
	if o.Lock != "" {
		wild = append(wild, "--lock", o.Lock)
	}
	fmt.Fprintf(&b, "%s -- *\n", strings.Join(wild, " "))
	return map[string][]byte{"cursor-dashboard.txt": []byte(b.String())}
}

// WritePolicyFile writes one policy file (0600, folders 0700) atomically.
func WritePolicyFile(path string, data []byte) error {
	return writeFileAtomic(path, data, 0o600)
}
