package mcpconfig

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Env is what expansion may read: the environment, and the workspace
// folder for ${workspaceFolder}.
type Env struct {
	// Lookup returns an environment variable and whether it is set.
	Lookup func(name string) (string, bool)
	// Workspace is the folder ${workspaceFolder} names ("" refuses it).
	Workspace string
}

// Expanded is a local server ready to start: every value expanded.
type Expanded struct {
	Argv []string
	// Env holds only the variables the config sets; the caller adds them
	// to its own environment, as clients do.
	Env map[string]string
	Cwd string
}

// Expand fills in the variables of a local server's command, arguments,
// environment and working folder:
//
//	${VAR}            the variable; an error when it is not set
//	${VAR:-default}   the variable, or default when it is unset or empty
//	${env:VAR}        the variable, or "" when it is not set (VS Code)
//	${workspaceFolder} the workspace folder (VS Code)
//
// Anything else in ${...}, such as VS Code's ${input:...}, is an error:
// it needs a person to answer. The error names the variable, never its
// value; a server that needs credentials to list its tools needs them
// wherever it is probed, in CI too.
func (s *Server) Expand(env Env) (*Expanded, error) {
	if !s.Local() {
		return nil, fmt.Errorf("server %q is not a local (stdio) server", s.Name)
	}
	x := &Expanded{Env: make(map[string]string, len(s.Env))}
	ex := func(v string) (string, error) {
		out, err := ExpandString(v, env)
		if err != nil {
			return "", fmt.Errorf("server %q: %w", s.Name, err)
		}
		return out, nil
	}
	cmd, err := ex(s.Command)
	if err != nil {
		return nil, err
	}
	x.Argv = append(x.Argv, cmd)
	for _, a := range s.Args {
		v, err := ex(a)
		if err != nil {
			return nil, err
		}
		x.Argv = append(x.Argv, v)
	}
	for _, k := range sortedKeys(s.Env) {
		v, err := ex(s.Env[k])
		if err != nil {
			return nil, err
		}
		x.Env[k] = v
	}
	if x.Cwd, err = ex(s.Cwd); err != nil {
		return nil, err
	}
	return x, nil
}

// ExpandString expands the variables of one value (see Server.Expand).
func ExpandString(v string, env Env) (string, error) {
	if !strings.Contains(v, "${") {
		return v, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String(), nil
		}
		b.WriteString(v[:i])
		end := strings.IndexByte(v[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in a value")
		}
		expr := v[i+2 : i+end]
		val, err := expandOne(expr, env)
		if err != nil {
			return "", err
		}
		b.WriteString(val)
		v = v[i+end+1:]
	}
}

func expandOne(expr string, env Env) (string, error) {
	lookup := env.Lookup
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	switch {
	case expr == "workspaceFolder":
		if env.Workspace == "" {
			return "", fmt.Errorf("${workspaceFolder} has no folder here")
		}
		return env.Workspace, nil
	case strings.HasPrefix(expr, "env:"):
		name := expr[len("env:"):]
		if !validVarName(name) {
			return "", fmt.Errorf("${env:...} needs a variable name")
		}
		v, _ := lookup(name)
		return v, nil
	}
	name, def, hasDefault := strings.Cut(expr, ":-")
	if !validVarName(name) {
		if i := strings.IndexByte(expr, ':'); i > 0 && validVarName(expr[:i]) {
			return "", fmt.Errorf("${%s:...} needs a person to answer; set the value in the environment instead", expr[:i])
		}
		return "", fmt.Errorf("${...} holds something other than a variable name")
	}
	v, ok := lookup(name)
	if hasDefault && (!ok || v == "") {
		return def, nil
	}
	if !ok {
		return "", fmt.Errorf("variable %s is not set (a server that needs credentials to list its tools needs them here too, and in CI)", name)
	}
	return v, nil
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range maps.Keys(m) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
