package wire

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// jsonDoc is a JSON or JSONC config file.
type jsonDoc struct {
	src  []byte
	root *Node
	list []*docEntry
}

func (d *jsonDoc) entries() []*docEntry { return d.list }
func (d *jsonDoc) value() any           { return d.root.Value() }

// newJSONDoc reads a JSON or JSONC config whose root is an object; its
// servers are not collected yet.
func newJSONDoc(src []byte) (*jsonDoc, error) {
	root, err := ParseJSONC(src)
	if err != nil {
		return nil, err
	}
	if root.Kind != Object {
		return nil, errors.New("the file is not a JSON object")
	}
	return &jsonDoc{src: src, root: root}, nil
}

// parseJSONDoc reads the servers of a JSON config in the given shape.
func parseJSONDoc(shape Shape, src []byte) (*jsonDoc, error) {
	d, err := newJSONDoc(src)
	if err != nil {
		return nil, err
	}
	root := d.root
	switch shape {
	case ShapeMCPServers:
		err = d.collect(shape, []string{"mcpServers"}, "user")
	case ShapeClaudeCode:
		if err = d.collect(shape, []string{"mcpServers"}, "user"); err != nil {
			break
		}
		var projects *Member
		if projects, err = root.Get("projects"); err != nil || projects == nil || projects.Value.Kind != Object {
			break
		}
		for _, p := range projects.Value.Members {
			if err = d.collect(shape, []string{"projects", p.Key, "mcpServers"}, "project "+p.Key); err != nil {
				break
			}
		}
	case ShapePluginServers:
		var m *Member
		if m, err = root.Get("mcpServers"); err == nil {
			if m != nil {
				err = d.collect(ShapeMCPServers, []string{"mcpServers"}, "user")
			} else {
				err = d.collect(ShapeMCPServers, nil, "user")
			}
		}
	case ShapeVSCode:
		err = d.collect(shape, []string{"servers"}, "user")
	case ShapeZed:
		err = d.collect(shape, []string{"context_servers"}, "user")
	default:
		err = fmt.Errorf("unknown shape %q", shape)
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// collect adds the entries of the object at path.
func (d *jsonDoc) collect(shape Shape, path []string, scope string) error {
	n := d.root
	for _, k := range path {
		m, err := n.Get(k)
		if err != nil {
			return err
		}
		if m == nil {
			return nil
		}
		n = m.Value
	}
	return d.collectNode(shape, n, path, scope)
}

// collectNode adds the entries of the object n, found at path.
func (d *jsonDoc) collectNode(shape Shape, n *Node, path []string, scope string) error {
	if n.Kind == Null {
		return nil
	}
	if n.Kind != Object {
		return fmt.Errorf("%s is not a JSON object", strings.Join(path, "."))
	}
	seen := map[string]bool{}
	for i := range n.Members {
		m := &n.Members[i]
		if seen[m.Key] {
			return fmt.Errorf("%w: server %q", errDuplicateKey, m.Key)
		}
		seen[m.Key] = true
		e := &docEntry{Entry: Entry{Name: m.Key, Scope: scope, where: append(append([]string{}, path...), m.Key)},
			start: m.Value.Start, end: m.Value.End}
		d.classify(shape, e, m.Value)
		d.list = append(d.list, e)
	}
	return nil
}

// remoteURLKeys are the members that hold a remote server's URL: url
// (most clients), serverUrl (Windsurf), httpUrl (Gemini CLI).
var remoteURLKeys = []string{"url", "serverUrl", "httpUrl"}

// classify fills in what an entry is and how to edit it.
func (d *jsonDoc) classify(shape Shape, e *docEntry, o *Node) {
	other := func(why string) { e.Kind, e.Why = Other, why }
	if o.Kind != Object {
		other("the entry is not a JSON object")
		return
	}
	get := func(k string) *Member {
		m, err := o.Get(k)
		if err != nil {
			other("a key appears twice in the entry")
			return nil
		}
		return m
	}
	if m := get("disabled"); m != nil && m.Value.Kind == Bool && m.Value.Str == "true" {
		e.Disabled = true
	}
	if m := get("enabled"); m != nil && m.Value.Kind == Bool && m.Value.Str == "false" {
		e.Disabled = true
	}
	if m := get("env"); m != nil {
		e.Env = stringMap(m.Value)
	}
	if e.Kind == Other {
		return
	}
	if shape == ShapeZed {
		if m := get("source"); m != nil && m.Value.Kind == String && m.Value.Str == "extension" {
			other("started by a Zed extension, not by a command in this file")
			return
		}
	}
	cmd := get("command")
	typ := get("type")
	if e.Kind == Other {
		return
	}
	if cmd != nil {
		parent, cmdMember := o, cmd
		if shape == ShapeZed && cmd.Value.Kind == Object {
			// Zed's older form: "command": {"path": ..., "args": [...], "env": {...}}
			parent = cmd.Value
			p, err := parent.Get("path")
			if err != nil || p == nil {
				other("the command has no path")
				return
			}
			cmdMember = p
			if m, _ := parent.Get("env"); m != nil {
				e.Env = stringMap(m.Value)
			}
		}
		if cmdMember.Value.Kind != String {
			other("the command is not a string")
			return
		}
		argsMember, err := parent.Get("args")
		if err != nil {
			other("a key appears twice in the entry")
			return
		}
		var args []string
		if argsMember != nil {
			var ok bool
			if args, ok = argsMember.Value.Strings(); !ok {
				other("args is not a list of strings")
				return
			}
		}
		e.Kind, e.Command, e.Args = Stdio, cmdMember.Value.Str, args
		legacyZed := parent != o
		e.stdio = func(command string, args []string) ([]edit, error) {
			return d.setLaunch(parent, cmdMember, argsMember, command, args), nil
		}
		e.expect = func(m map[string]any, command string, args []string, _ bool) {
			if legacyZed {
				c, _ := m["command"].(map[string]any)
				if c == nil {
					return
				}
				m = c
				m["path"] = command
			} else {
				m["command"] = command
			}
			m["args"] = anyStrings(args)
		}
		return
	}
	var urlMember *Member
	for _, k := range remoteURLKeys {
		if m := get(k); m != nil {
			if urlMember != nil {
				other("the entry names more than one URL")
				return
			}
			urlMember = m
		}
	}
	if urlMember == nil || urlMember.Value.Kind != String {
		if e.Kind != Other {
			other("the entry has neither a command nor a URL")
		}
		return
	}
	e.Kind, e.URL, e.Transport = Remote, urlMember.Value.Str, "http"
	if typ != nil && typ.Value.Kind == String && typ.Value.Str == "sse" {
		e.Transport = "sse"
	}
	if shape == ShapeMCPServers && urlMember.Key == "url" && typ == nil && strings.HasSuffix(strings.TrimRight(e.URL, "/"), "/sse") {
		e.Transport = "sse"
	}
	hdr := get("headers")
	if hdr != nil {
		e.Headers = stringMap(hdr.Value)
		if e.Headers == nil || len(e.Headers) != len(hdr.Value.Members) {
			other("headers is not an object of strings")
			return
		}
		for _, v := range e.Headers {
			if strings.Contains(v, "${") || strings.Contains(v, "{env:") {
				e.EnvCredential = "a header value that names a variable"
			}
		}
	}
	e.remote = func(command string, args []string) ([]edit, error) {
		return d.toStdio(o, urlMember, typ, hdr, command, args)
	}
	e.expect = func(m map[string]any, command string, args []string, fromRemote bool) {
		if fromRemote {
			delete(m, urlMember.Key)
			delete(m, "headers")
			if _, ok := m["type"]; ok {
				m["type"] = "stdio"
			}
		}
		m["command"] = command
		m["args"] = anyStrings(args)
	}
}

func stringMap(n *Node) map[string]string {
	if n == nil || n.Kind != Object {
		return nil
	}
	out := map[string]string{}
	for _, m := range n.Members {
		if m.Value.Kind == String {
			out[m.Key] = m.Value.Str
		}
	}
	return out
}

// kvSep is the text between a member's key and value, when it is plain.
func (d *jsonDoc) kvSep(m *Member) string {
	s := d.src[m.KeyEnd:m.Value.Start]
	if t := bytes.TrimSpace(s); string(t) == ":" && bytes.IndexByte(s, '\n') < 0 {
		return string(s)
	}
	return ": "
}

// memberSep is what separates members of o: a newline and the member's
// indentation when o spans lines, a space otherwise.
func (d *jsonDoc) memberSep(o *Node, m *Member) string {
	if bytes.IndexByte(d.src[o.Start:o.End], '\n') >= 0 {
		if ind := lineIndent(d.src, m.KeyStart); ind != "" || d.src[max(m.KeyStart-1, 0)] == '\n' {
			return "\n" + ind
		}
	}
	return " "
}

func (d *jsonDoc) arrayText(old *Node, items []string) string {
	enc := make([]string, len(items))
	for i, s := range items {
		enc[i] = jsonString(s)
	}
	st := arrayStyle{sep: ", "}
	if old != nil && old.Kind == Array {
		spans := make([][2]int, len(old.Elems))
		for i, e := range old.Elems {
			spans[i] = [2]int{e.Start, e.End}
		}
		st = styleOf(d.src, old.Start, old.End, spans)
	}
	return st.render(enc)
}

// setLaunch replaces the command and args values; a missing args member
// is added right after the command.
func (d *jsonDoc) setLaunch(parent *Node, cmd, args *Member, command string, argv []string) []edit {
	edits := []edit{{cmd.Value.Start, cmd.Value.End, jsonString(command)}}
	if args != nil {
		return append(edits, edit{args.Value.Start, args.Value.End, d.arrayText(args.Value, argv)})
	}
	text := "," + d.memberSep(parent, cmd) + `"args"` + d.kvSep(cmd) + d.arrayText(nil, argv)
	return append(edits, edit{cmd.Value.End, cmd.Value.End, text})
}

// toStdio turns a remote entry into a stdio one: the URL member becomes
// command and args, a type becomes "stdio", and the headers go (wrap has
// moved them into a credential file).
func (d *jsonDoc) toStdio(o *Node, url, typ, hdr *Member, command string, argv []string) ([]edit, error) {
	kv := d.kvSep(url)
	text := `"command"` + kv + jsonString(command) + "," + d.memberSep(o, url) + `"args"` + kv + d.arrayText(nil, argv)
	edits := []edit{{url.KeyStart, url.Value.End, text}}
	if typ != nil {
		edits = append(edits, edit{typ.Value.Start, typ.Value.End, `"stdio"`})
	}
	if hdr != nil {
		i := memberIndex(o, hdr)
		mem := &o.Members[i]
		switch {
		case i > 0 && mem.Comma >= 0:
			edits = append(edits, edit{o.Members[i-1].Comma + 1, mem.Comma + 1, ""})
		case i > 0:
			edits = append(edits, edit{o.Members[i-1].Comma, mem.Value.End, ""})
		case len(o.Members) > 1:
			edits = append(edits, edit{mem.KeyStart, o.Members[1].KeyStart, ""})
		default:
			return nil, errors.New("internal error: headers without a URL")
		}
	}
	return edits, nil
}

func memberIndex(o *Node, m *Member) int {
	for i := range o.Members {
		if &o.Members[i] == m {
			return i
		}
	}
	return -1
}

// claudeProjectDirs lists the folders ~/.claude.json knows (the keys of
// projects), where project configs may be found.
func claudeProjectDirs(src []byte) []string {
	root, err := ParseJSONC(src)
	if err != nil {
		return nil
	}
	p, err := root.Get("projects")
	if err != nil || p == nil || p.Value.Kind != Object {
		return nil
	}
	var out []string
	for _, m := range p.Value.Members {
		out = append(out, m.Key)
	}
	return out
}
