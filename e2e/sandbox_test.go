package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The sandboxed launch, end to end: the real binary creates profiles,
// launches the npm reference servers and a hostile server under them, and
// the TypeScript SDK client or testmcp's client talks to them.

var hostile struct {
	once sync.Once
	path string
	err  error
}

// hostileServer builds internal/testmcp/cmd/hostile next to the binaries
// TestMain built (removed with them).
func hostileServer(t *testing.T) string {
	t.Helper()
	hostile.once.Do(func() {
		hostile.path = filepath.Join(filepath.Dir(bin.testserver), "hostile")
		cmd := exec.Command("go", "build", "-o", hostile.path, "./internal/testmcp/cmd/hostile")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			hostile.err = err
			hostile.path = string(out)
		}
	})
	if hostile.err != nil {
		t.Fatalf("building the hostile server: %v\n%s", hostile.err, hostile.path)
	}
	return hostile.path
}

func needLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux only; elsewhere launch profiles refuse to launch (tested in launch)")
	}
}

// createProfile runs `mcpseal profile create NAME --yes FLAGS -- ARGV`,
// passing the test's process tag so that the orphan check sees the
// sandboxed processes.
func createProfile(t *testing.T, home, name string, flags []string, argv ...string) {
	t.Helper()
	args := append(append([]string{"profile", "create", name, "--yes", "--pass-env", tagEnv}, flags...), "--")
	out, errOut, code := mcpseal(t, home, append(args, argv...)...)
	if code != 0 {
		t.Fatalf("profile create %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, out, errOut)
	}
}

// startExec runs `mcpseal run --profile NAME` with a testmcp client on
// its stdio.
func startExec(t *testing.T, home, name string) *proxy {
	t.Helper()
	return startMcpseal(t, home, "run", "--profile", name)
}

const allEnforced = "mcpseal: enforced: filesystem, limits, namespaces, network, no-new-privs, processes, syscalls"

// TestSandboxedReferenceServers runs the npm reference servers under
// profiles with the TypeScript SDK client: lists and calls succeed inside
// the sandbox, twice in a row with no false drift.
func TestSandboxedReferenceServers(t *testing.T) {
	t.Parallel()
	needLinux(t)
	needNode(t)
	run := func(t *testing.T, home, name string, flags ...string) (tsSummary, string) {
		t.Helper()
		sum, stderr := tsSession(t, environ(t, home), flags, bin.mcpseal, "run", "--profile", name)
		sum.wantOK(t, name, stderr)
		if !strings.Contains(stderr, allEnforced) {
			t.Errorf("%s: stderr does not report every confinement enforced:\n%s", name, stderr)
		}
		return sum, stderr
	}

	t.Run("server-filesystem", func(t *testing.T) {
		t.Parallel()
		h := home(t)
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		createProfile(t, h, "files", []string{"--rw", root}, referenceServer("server-filesystem", root)...)
		sum, _ := run(t, h, "files", "--call", "read_text_file", "--args", `{"path":"`+filepath.Join(root, "hello.txt")+`"}`)
		if sum.Call == nil || sum.Call.IsError || sum.Call.Text == nil || *sum.Call.Text != "hello\n" {
			t.Errorf("read_text_file = %+v", sum.Call)
		}
		sum, _ = run(t, h, "files", "--call", "write_file", "--args", `{"path":"`+filepath.Join(root, "new.txt")+`","content":"written"}`)
		if b, err := os.ReadFile(filepath.Join(root, "new.txt")); err != nil || string(b) != "written" {
			t.Errorf("write_file inside the read-write folder: %q, %v (call %+v)", b, err, sum.Call)
		}
		if !slices.Contains(sum.Tools, "read_text_file") {
			t.Errorf("tools = %v", sum.Tools)
		}
	})

	t.Run("server-memory", func(t *testing.T) {
		t.Parallel()
		h := home(t)
		dir := t.TempDir()
		file := filepath.Join(dir, "memory.jsonl")
		createProfile(t, h, "memory", []string{"--rw", dir, "--set-env", "MEMORY_FILE_PATH=" + file}, referenceServer("server-memory")...)
		run(t, h, "memory", "--call", "create_entities", "--args", `{"entities":[{"name":"mcpseal","entityType":"tool","observations":["sandboxed"]}]}`)
		sum, _ := run(t, h, "memory", "--call", "read_graph")
		if sum.Call == nil || sum.Call.Text == nil || !strings.Contains(*sum.Call.Text, "sandboxed") {
			t.Errorf("read_graph after create_entities = %+v", sum.Call)
		}
		if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "sandboxed") {
			t.Errorf("the memory file: %q, %v", b, err)
		}
	})

	t.Run("server-everything", func(t *testing.T) {
		t.Parallel()
		h := home(t)
		createProfile(t, h, "everything", []string{"--network", "none"}, referenceServer("server-everything", "stdio")...)
		var first []string
		for i := 0; i < 2; i++ {
			sum, _ := run(t, h, "everything", "--call", "echo", "--args", `{"message":"hello"}`)
			if sum.Call == nil || sum.Call.Text == nil || *sum.Call.Text != "Echo: hello" {
				t.Errorf("echo = %+v", sum.Call)
			}
			if !sum.Instructions || len(sum.Prompts) == 0 || len(sum.Resources) == 0 {
				t.Errorf("summary lacks instructions, prompts or resources: %+v", sum)
			}
			if i == 0 {
				first = sum.Tools
			} else if !slices.Equal(sum.Tools, first) {
				t.Errorf("session 2 tools %v, session 1 %v", sum.Tools, first)
			}
		}
	})
}

// TestHostileServerUnderProfile runs the hostile server through the real
// binary: its attacks fail, mcpseal reports what it saw on stderr, and
// nothing it started survives the session.
func TestHostileServerUnderProfile(t *testing.T) {
	t.Parallel()
	needLinux(t)
	h := home(t)
	secret := filepath.Join(t.TempDir(), ".ssh", "id_rsa")
	os.MkdirAll(filepath.Dir(secret), 0o700)
	os.WriteFile(secret, []byte("FAKE KEY\n"), 0o600)
	createProfile(t, h, "hostile", nil, hostileServer(t))
	p := startExec(t, h, "hostile")
	if _, err := p.Initialize("2025-06-18", nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	call := func(tool string, args any) string {
		t.Helper()
		res, err := p.CallTool(tool, args)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var r struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
			t.Fatalf("%s: %s", tool, res)
		}
		return r.Content[0].Text
	}
	for _, c := range []struct {
		tool string
		args any
	}{
		{"read", map[string]any{"path": secret}},
		{"write", map[string]any{"path": filepath.Join(filepath.Dir(secret), "authorized_keys")}},
		{"connect", map[string]any{"addr": "192.0.2.1:80"}},
		{"ptrace", nil},
	} {
		if text := call(c.tool, c.args); !strings.HasPrefix(text, "denied:") {
			t.Errorf("%s was not denied: %s", c.tool, text)
		}
	}
	// A child that ignores SIGTERM in a session of its own, then a fork
	// bomb: neither survives the session.
	if text := call("orphan", nil); !strings.HasPrefix(text, "ok:") {
		t.Fatalf("orphan: %s", text)
	}
	if text := call("fork", map[string]any{"n": 1000}); !strings.HasPrefix(text, "denied:") {
		t.Errorf("fork 1000 was not denied: %s", text)
	}
	if code := p.Close(); code != exitOK {
		t.Errorf("exit status %d", code)
	}
	stderr := p.Stderr()
	for _, want := range []string{allEnforced, "mcpseal: sandbox: denied system call ptrace", "mcpseal: sandbox: limit processes (64) reached", "process(es) it left running were killed"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// tag's cleanup fails the test if a process of the sandbox outlived it.
}

// TestProfileRefusesChangedExecutable: the binary swapped after the
// profile was made is refused before anything runs.
func TestProfileRefusesChangedExecutable(t *testing.T) {
	t.Parallel()
	needLinux(t)
	h := home(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	server := filepath.Join(dir, "server")
	b, err := os.ReadFile(hostileServer(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(server, b, 0o755); err != nil {
		t.Fatal(err)
	}
	createProfile(t, h, "swapped", nil, server)
	if err := os.WriteFile(server, append(b, "tampered"...), 0o755); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := mcpseal(t, h, "run", "--profile", "swapped")
	if code != 7 || !strings.Contains(stderr, "launch refused: executable: its bytes changed") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	_, _, code = mcpseal(t, h, "profile", "check", "swapped")
	if code != 1 {
		t.Errorf("profile check of a swapped executable: exit %d, want 1", code)
	}
}
