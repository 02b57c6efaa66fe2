package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// nodeDir holds client.mjs and the pinned npm packages.
func nodeDir() string { return filepath.Join(repoRoot, "e2e", "node") }

// needNode fails (never skips) the test when node or the pinned packages
// are missing: these are required end-to-end tests.
func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH: the TypeScript SDK end-to-end tests need Node.js 18 or later")
	}
	for _, pkg := range []string{"sdk", "server-everything", "server-memory", "server-filesystem"} {
		if _, err := os.Stat(filepath.Join(nodeDir(), "node_modules", "@modelcontextprotocol", pkg, "package.json")); err != nil {
			t.Fatalf("e2e/node/node_modules is missing @modelcontextprotocol/%s: run `npm ci --prefix e2e/node` (scripts/test does it)", pkg)
		}
	}
}

// referenceServer is the argv of an npm reference server's stdio entry.
func referenceServer(pkg string, args ...string) []string {
	return append([]string{"node", filepath.Join(nodeDir(), "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")}, args...)
}

// tsSummary is what client.mjs prints.
type tsSummary struct {
	OK    bool   `json:"ok"`
	Stage string `json:"stage"`
	Error *struct {
		Code    *int            `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	Server            json.RawMessage `json:"server"`
	Instructions      bool            `json:"instructions"`
	Tools             []string        `json:"tools"`
	Prompts           []string        `json:"prompts"`
	Resources         []string        `json:"resources"`
	ResourceTemplates []string        `json:"resourceTemplates"`
	Call              *struct {
		IsError bool    `json:"isError"`
		Text    *string `json:"text"`
	} `json:"call"`
}

// tsSession runs client.mjs with flags against argv and returns its
// summary; stderr carries the server's (and mcpseal's) stderr.
func tsSession(t *testing.T, env []string, flags []string, argv ...string) (sum tsSummary, stderr string) {
	t.Helper()
	args := append([]string{filepath.Join(nodeDir(), "client.mjs")}, flags...)
	cmd := exec.Command("node", append(append(args, "--"), argv...)...)
	cmd.Dir = nodeDir()
	cmd.Env = env
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	ownGroup(cmd)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code, ok := waitExit(cmd, 60*time.Second)
	if !ok {
		t.Fatalf("client.mjs did not finish within 60s\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	line := strings.TrimSpace(out.String())
	if err := json.Unmarshal([]byte(line), &sum); err != nil {
		t.Fatalf("client.mjs exit %d printed %q: %v\nstderr:\n%s", code, line, err, errb.String())
	}
	if sum.OK != (code == 0) {
		t.Errorf("client.mjs exit %d with ok=%v", code, sum.OK)
	}
	if testing.Verbose() {
		t.Logf("client.mjs %s: %v", strings.Join(flags, " "), time.Since(start).Round(time.Millisecond))
	}
	return sum, errb.String()
}

// wantOK fails the test unless the session succeeded.
func (s *tsSummary) wantOK(t *testing.T, what, stderr string) {
	t.Helper()
	if !s.OK {
		msg := ""
		if s.Error != nil {
			msg = s.Error.Message
			if s.Error.Code != nil {
				msg = strings.Join([]string{msg, "code", jsonInt(*s.Error.Code), "data", string(s.Error.Data)}, " ")
			}
		}
		t.Fatalf("%s failed at %s: %s\nstderr:\n%s", what, s.Stage, msg, stderr)
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestReferenceServers runs the official TypeScript SDK client through
// mcpseal in front of the npm reference servers: two sessions in a row
// must both succeed with no false drift; server-everything, which lists
// get-roots-list only to clients that declare roots, must also pass a
// third session with roots and a fourth without.
func TestReferenceServers(t *testing.T) {
	t.Parallel()
	needNode(t)

	t.Run("server-everything", func(t *testing.T) {
		t.Parallel()
		h := home(t)
		env := environ(t, h)
		argv := throughMcpseal("everything", referenceServer("server-everything", "stdio")...)
		sessions := []struct {
			flags     []string
			wantRoots bool
		}{
			{[]string{"--call", "echo", "--args", `{"message":"hello"}`}, false},
			{nil, false},
			{[]string{"--roots"}, true},
			{nil, false},
		}
		var first []string
		for i, s := range sessions {
			sum, stderr := tsSession(t, env, s.flags, argv...)
			sum.wantOK(t, "session "+jsonInt(i+1), stderr)
			if got := slices.Contains(sum.Tools, "get-roots-list"); got != s.wantRoots {
				t.Errorf("session %d: get-roots-list listed = %v, want %v (tools %v)", i+1, got, s.wantRoots, sum.Tools)
			}
			if !sum.Instructions || len(sum.Prompts) == 0 || len(sum.Resources) == 0 || len(sum.ResourceTemplates) == 0 {
				t.Errorf("session %d: summary lacks instructions, prompts, resources or templates: %+v", i+1, sum)
			}
			if i == 0 {
				first = sum.Tools
				if sum.Call == nil || sum.Call.IsError || sum.Call.Text == nil || !strings.Contains(*sum.Call.Text, "hello") {
					t.Errorf("echo call = %+v", sum.Call)
				}
			} else if !s.wantRoots && !slices.Equal(sum.Tools, first) {
				t.Errorf("session %d: tools %v, first session %v", i+1, sum.Tools, first)
			}
		}
	})

	t.Run("server-memory", func(t *testing.T) {
		t.Parallel()
		h := home(t)
		env := environ(t, h, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"))
		argv := throughMcpseal("memory", referenceServer("server-memory")...)
		var first []string
		for i, flags := range [][]string{{"--call", "read_graph"}, nil} {
			sum, stderr := tsSession(t, env, flags, argv...)
			sum.wantOK(t, "session "+jsonInt(i+1), stderr)
			if i == 0 {
				first = sum.Tools
				if sum.Call == nil || sum.Call.IsError {
					t.Errorf("read_graph call = %+v", sum.Call)
				}
			} else if !slices.Equal(sum.Tools, first) {
				t.Errorf("session 2 tools %v, session 1 %v", sum.Tools, first)
			}
			if !slices.Contains(sum.Tools, "read_graph") {
				t.Errorf("session %d: tools = %v", i+1, sum.Tools)
			}
		}
	})

	t.Run("server-filesystem", func(t *testing.T) {
		t.Parallel()
		h := home(t)
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		env := environ(t, h)
		argv := throughMcpseal("filesystem", referenceServer("server-filesystem", root)...)
		var first []string
		for i, flags := range [][]string{{"--call", "list_allowed_directories"}, nil} {
			sum, stderr := tsSession(t, env, flags, argv...)
			sum.wantOK(t, "session "+jsonInt(i+1), stderr)
			if i == 0 {
				first = sum.Tools
				if sum.Call == nil || sum.Call.IsError {
					t.Errorf("list_allowed_directories call = %+v", sum.Call)
				}
			} else if !slices.Equal(sum.Tools, first) {
				t.Errorf("session 2 tools %v, session 1 %v", sum.Tools, first)
			}
			if !slices.Contains(sum.Tools, "read_text_file") {
				t.Errorf("session %d: tools = %v", i+1, sum.Tools)
			}
		}
	})
}

// TestHarnessReferenceServersDirect runs client.mjs against the same
// servers without mcpseal: it checks the harness itself and the
// capability-dependent tool that TestReferenceServers relies on.
func TestHarnessReferenceServersDirect(t *testing.T) {
	t.Parallel()
	needNode(t)
	everything := referenceServer("server-everything", "stdio")
	cases := []struct {
		name  string
		env   []string
		flags []string
		argv  []string
		check func(t *testing.T, s tsSummary)
	}{
		{"everything-roots", nil, []string{"--roots", "--call", "echo", "--args", `{"message":"hi"}`}, everything, func(t *testing.T, s tsSummary) {
			if !slices.Contains(s.Tools, "get-roots-list") {
				t.Errorf("a client with roots was not offered get-roots-list: %v", s.Tools)
			}
			if s.Call == nil || s.Call.Text == nil || *s.Call.Text != "Echo: hi" {
				t.Errorf("echo = %+v", s.Call)
			}
		}},
		{"everything-no-roots", nil, nil, everything, func(t *testing.T, s tsSummary) {
			if slices.Contains(s.Tools, "get-roots-list") {
				t.Errorf("a client without roots was offered get-roots-list")
			}
		}},
		{"memory", []string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "m.jsonl")}, []string{"--call", "read_graph"}, referenceServer("server-memory"), func(t *testing.T, s tsSummary) {
			if !slices.Contains(s.Tools, "read_graph") {
				t.Errorf("tools = %v", s.Tools)
			}
		}},
		{"filesystem", nil, []string{"--call", "list_allowed_directories"}, referenceServer("server-filesystem", t.TempDir()), func(t *testing.T, s tsSummary) {
			if !slices.Contains(s.Tools, "read_text_file") {
				t.Errorf("tools = %v", s.Tools)
			}
		}},
		{"sdkserver", nil, []string{"--call", "echo", "--args", `{"text":"hi"}`}, nil, func(t *testing.T, s tsSummary) {
			if !slices.Equal(s.Tools, []string{"add", "echo"}) || s.Call == nil || s.Call.Text == nil || *s.Call.Text != "hi" {
				t.Errorf("sdkserver via the TypeScript client: %+v", s)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := c.argv
			if argv == nil {
				file := filepath.Join(t.TempDir(), "tools.json")
				baseDefs().write(t, file)
				argv = []string{bin.sdkserver, file}
			}
			sum, stderr := tsSession(t, environ(t, home(t), c.env...), c.flags, argv...)
			sum.wantOK(t, c.name, stderr)
			c.check(t, sum)
		})
	}
}
