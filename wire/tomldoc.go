package wire

import (
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// tomlDoc is a Codex config.toml.
type tomlDoc struct {
	src  []byte
	data map[string]any
	sc   *tomlScanner
	list []*docEntry
}

func (d *tomlDoc) entries() []*docEntry { return d.list }
func (d *tomlDoc) value() any           { return d.data }

func parseTOMLDoc(src []byte) (*tomlDoc, error) {
	d := &tomlDoc{src: src}
	if _, err := toml.Decode(string(src), &d.data); err != nil {
		return nil, tomlSyntaxError(err)
	}
	sc, err := scanTOML(src)
	if err != nil {
		return nil, err
	}
	d.sc = sc
	servers, _ := d.data["mcp_servers"].(map[string]any)
	var names []string
	for _, t := range sc.tables {
		if !t.array && len(t.key) == 2 && t.key[0] == "mcp_servers" && servers[t.key[1]] != nil && !slices.Contains(names, t.key[1]) {
			names = append(names, t.key[1])
		}
	}
	var rest []string
	for n := range servers {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	for _, n := range append(names, rest...) {
		d.list = append(d.list, d.entry(n, servers[n]))
	}
	return d, nil
}

// entry reads server name, whose decoded value is v.
func (d *tomlDoc) entry(name string, v any) *docEntry {
	table := []string{"mcp_servers", name}
	e := &docEntry{Entry: Entry{Name: name, Scope: "user", where: table}}
	other := func(why string) *docEntry { e.Kind, e.Why = Other, why; return e }
	m, ok := v.(map[string]any)
	if !ok {
		return other("the entry is not a table")
	}
	if en, ok := m["enabled"].(bool); ok && !en {
		e.Disabled = true
	}
	if env, ok := m["env"].(map[string]any); ok {
		e.Env = map[string]string{}
		for k, x := range env {
			if s, ok := x.(string); ok {
				e.Env[k] = s
			}
		}
	}
	ti := slices.IndexFunc(d.sc.tables, func(t tomlTable) bool { return !t.array && sameKey(t.key, table) })
	if ti < 0 {
		return other("written as an inline table or dotted keys, which mcpseal does not edit")
	}
	e.start, e.end = d.sc.tables[ti].start, len(d.src)
	if ti+1 < len(d.sc.tables) {
		e.end = d.sc.tables[ti+1].start
	}
	// find returns the statement that sets key directly in the entry's
	// table, checked against the decoder.
	find := func(key string) (*tomlKV, bool) {
		want, present := m[key]
		for i := range d.sc.kvs {
			kv := &d.sc.kvs[i]
			if sameKey(kv.table, table) && len(kv.key) == 1 && kv.key[0] == key {
				got, err := decodeTOMLValue(string(d.src[kv.valStart:kv.valEnd]))
				if err != nil || !reflect.DeepEqual(got, want) {
					return nil, false
				}
				return kv, true
			}
		}
		return nil, !present
	}
	cmd, okc := find("command")
	args, oka := find("args")
	url, oku := find("url")
	hdr, okh := find("http_headers")
	if !okc || !oka || !oku || !okh {
		return other("written in a form mcpseal does not edit (a key set outside the entry's table)")
	}
	switch {
	case cmd != nil:
		c, ok := m["command"].(string)
		if !ok {
			return other("the command is not a string")
		}
		var argv []string
		if args != nil {
			a, ok := m["args"].([]any)
			if !ok {
				return other("args is not a list of strings")
			}
			for _, x := range a {
				s, ok := x.(string)
				if !ok {
					return other("args is not a list of strings")
				}
				argv = append(argv, s)
			}
		}
		e.Kind, e.Command, e.Args = Stdio, c, argv
		e.stdio = func(command string, argv []string) ([]edit, error) {
			return d.setLaunch(cmd, args, command, argv), nil
		}
	case url != nil:
		u, ok := m["url"].(string)
		if !ok {
			return other("the url is not a string")
		}
		e.Kind, e.URL, e.Transport = Remote, u, "http"
		if h, ok := m["http_headers"].(map[string]any); ok {
			e.Headers = map[string]string{}
			for k, x := range h {
				s, ok := x.(string)
				if !ok {
					return other("http_headers is not a table of strings")
				}
				e.Headers[k] = s
			}
		} else if m["http_headers"] != nil {
			return other("http_headers is not a table of strings")
		}
		for _, k := range []string{"bearer_token_env_var", "env_http_headers"} {
			if m[k] != nil {
				e.EnvCredential = k
			}
		}
		e.remote = func(command string, argv []string) ([]edit, error) {
			return d.toStdio(url, hdr, command, argv), nil
		}
	default:
		return other("the entry has neither a command nor a url")
	}
	e.expect = func(m map[string]any, command string, argv []string, fromRemote bool) {
		if fromRemote {
			delete(m, "url")
			delete(m, "http_headers")
		}
		m["command"] = command
		m["args"] = anyStrings(argv)
	}
	return e
}

func (d *tomlDoc) arrayText(old *tomlKV, items []string) string {
	enc := make([]string, len(items))
	for i, s := range items {
		enc[i] = tomlString(s)
	}
	st := arrayStyle{sep: ", "}
	if old != nil && len(old.elems) > 0 {
		st = styleOf(d.src, old.valStart, old.valEnd, old.elems)
	}
	return st.render(enc)
}

// setLaunch replaces the command and args values; a missing args line is
// added after the command's line.
func (d *tomlDoc) setLaunch(cmd, args *tomlKV, command string, argv []string) []edit {
	edits := []edit{{cmd.valStart, cmd.valEnd, tomlString(command)}}
	if args != nil {
		return append(edits, edit{args.valStart, args.valEnd, d.arrayText(args, argv)})
	}
	at := cmd.lineEnd
	if at > 0 && at < len(d.src) && d.src[at-1] == '\r' {
		at--
	}
	text := d.newline() + lineIndent(d.src, cmd.keyStart) + "args = " + d.arrayText(nil, argv)
	return append(edits, edit{at, at, text})
}

// toStdio turns the url line into command and args lines and removes the
// http_headers line (wrap has moved the headers into a credential file).
func (d *tomlDoc) toStdio(url, hdr *tomlKV, command string, argv []string) []edit {
	text := "command = " + tomlString(command) + d.newline() + lineIndent(d.src, url.keyStart) + "args = " + d.arrayText(nil, argv)
	edits := []edit{{url.keyStart, url.valEnd, text}}
	if hdr != nil {
		end := min(hdr.lineEnd+1, len(d.src))
		edits = append(edits, edit{hdr.lineStart, end, ""})
	}
	return edits
}

// newline is the file's line ending.
func (d *tomlDoc) newline() string {
	if strings.Contains(string(d.src), "\r\n") {
		return "\r\n"
	}
	return "\n"
}
