package mcpconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testEnv is the environment the vectors expand with.
var testEnv = Env{
	Lookup: func(name string) (string, bool) {
		v, ok := map[string]string{"GITHUB_TOKEN": "t0ken", "HOME": "/home/me", "EMPTY": ""}[name]
		return v, ok
	},
	Workspace: "/work/project",
}

// TestConfigVectors reads every config of testdata/mcpconfig/vectors.json
// and expands every local server.
func TestConfigVectors(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../testdata/mcpconfig/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		File    string `json:"file"`
		Shape   string `json:"shape"`
		Error   bool   `json:"error"`
		Servers map[string]struct {
			Local bool              `json:"local"`
			Argv  []string          `json:"argv"`
			Env   map[string]string `json:"env"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(b, &vectors); err != nil || len(vectors) == 0 {
		t.Fatalf("vectors: %v", err)
	}
	for _, v := range vectors {
		c, err := Load(filepath.Join("../testdata/mcpconfig", v.File))
		if v.Error {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: got %v, want ErrInvalid", v.File, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", v.File, err)
			continue
		}
		if c.Shape != v.Shape || len(c.Servers) != len(v.Servers) {
			t.Errorf("%s: shape %s, %d servers", v.File, c.Shape, len(c.Servers))
		}
		for name, want := range v.Servers {
			s, ok := c.Lookup(name)
			if !ok || s.Local() != want.Local {
				t.Errorf("%s: server %s: %+v", v.File, name, s)
				continue
			}
			if !want.Local {
				continue
			}
			x, err := s.Expand(testEnv)
			if err != nil {
				t.Errorf("%s: %s: %v", v.File, name, err)
				continue
			}
			if !slices.Equal(x.Argv, want.Argv) {
				t.Errorf("%s: %s: argv %q, want %q", v.File, name, x.Argv, want.Argv)
			}
			for k, val := range want.Env {
				if x.Env[k] != val {
					t.Errorf("%s: %s: env %s = %q", v.File, name, k, x.Env[k])
				}
			}
		}
	}
}

// TestCaseVariantCommandIgnored: a JavaScript client reads "command";
// "Command" must not win in mcpseal (encoding/json would take it).
func TestCaseVariantCommandIgnored(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`{"mcpServers": {"a": {"command": "honest", "Command": "evil", "ARGS": ["x"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Servers[0]; s.Command != "honest" || len(s.Args) != 0 {
		t.Fatalf("got %+v", s)
	}
}

// TestExpansion covers every form clients expand, and the refusals.
func TestExpansion(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":                  "plain",
		"${HOME}/x":              "/home/me/x",
		"${NOPE:-def}":           "def",
		"${EMPTY:-def}":          "def",
		"${HOME:-def}":           "/home/me",
		"${env:NOPE}":            "",
		"${env:HOME}:${HOME}":    "/home/me:/home/me",
		"${workspaceFolder}/a":   "/work/project/a",
		"$HOME":                  "$HOME",
		"${NOPE:-a:b-c}":         "a:b-c",
		"${GITHUB_TOKEN}${HOME}": "t0ken/home/me",
	} {
		got, err := ExpandString(in, testEnv)
		if err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"${NOPE}", "${input:token}", "${", "${}", "${1A}", "${env:}", "${A B}"} {
		if got, err := ExpandString(in, testEnv); err == nil {
			t.Errorf("%q: got %q, want an error", in, got)
		}
	}
	_, err := ExpandString("${SECRET_TOKEN}", Env{Lookup: func(string) (string, bool) { return "", false }})
	if err == nil || !strings.Contains(err.Error(), "credentials") || !strings.Contains(err.Error(), "SECRET_TOKEN") {
		t.Errorf("unset variable error %v should name it and mention credentials", err)
	}
}

// TestExpandedValueIsNotExpandedAgain: a variable's value that holds
// ${...} is taken as it is.
func TestExpandedValueIsNotExpandedAgain(t *testing.T) {
	t.Parallel()
	got, err := ExpandString("${A}", Env{Lookup: func(n string) (string, bool) { return "${B}", n == "A" }})
	if err != nil || got != "${B}" {
		t.Fatalf("got %q, %v", got, err)
	}
}

// TestUnwrap reads a server already wrapped by mcpseal run.
func TestUnwrap(t *testing.T) {
	t.Parallel()
	s := Server{Name: "memory", Command: "/usr/local/bin/mcpseal", Args: []string{"run", "--name=memory", "--lock", "x.lock", "--", "npx", "-y", "pkg"}}
	inner, w, err := s.Unwrap()
	if err != nil || w == nil || w.Name != "memory" || w.Lock != "x.lock" || inner.Command != "npx" || !slices.Equal(inner.Args, []string{"-y", "pkg"}) {
		t.Fatalf("got %+v %+v %v", inner, w, err)
	}
	if _, w, _ := (&Server{Command: "npx", Args: []string{"run"}}).Unwrap(); w != nil {
		t.Error("unwrapped a server that is not wrapped")
	}
	if _, _, err := (&Server{Command: "mcpseal", Args: []string{"run", "--name", "x"}}).Unwrap(); err == nil {
		t.Error("a wrapper without -- was accepted")
	}
}

// TestJSONC: comments and trailing commas go; strings keep "//" and "/*".
func TestJSONC(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte("{\"servers\": {\"a\": {\"command\": \"x//y\", \"args\": [\"/*z*/\", \"a,]\",],}, /* c */ }, // end\n}"))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Servers[0]; s.Command != "x//y" || !slices.Equal(s.Args, []string{"/*z*/", "a,]"}) {
		t.Fatalf("got %+v", s)
	}
	for _, bad := range []string{`{"servers": {,}}`, `{"servers": {"a": {"command": "x",,}}}`, `{"servers": /* open`, `{"servers": "x`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParse: the config reader never panics; what it accepts has named,
// sorted servers.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../testdata/mcpconfig/*.json")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		for i, s := range c.Servers {
			if s.Name == "" || i > 0 && c.Servers[i-1].Name >= s.Name {
				t.Fatalf("servers %+v", c.Servers)
			}
			if s.Local() {
				_, _ = s.Expand(testEnv)
			}
			_, _, _ = s.Unwrap()
		}
	})
}

// FuzzExpandString: expansion never panics and never leaves an
// unexpanded ${ from the input when it succeeds on variable-free values.
func FuzzExpandString(f *testing.F) {
	for _, s := range []string{"${A}", "${A:-b}", "${env:A}", "${workspaceFolder}", "a${", "${input:x}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ExpandString(s, Env{Lookup: func(string) (string, bool) { return "v", true }, Workspace: "/w"})
		if err == nil && strings.Contains(s, "${") && got == s {
			t.Fatalf("%q unchanged", s)
		}
	})
}
