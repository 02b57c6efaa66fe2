package launch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeProgram copies /usr/bin/true to dir/name.
func fakeProgram(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile("/usr/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestProposeBinaryOnPath(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	prog := fakeProgram(t, bin, "server")
	p, _, err := Propose(ProposeOptions{Name: "srv", Argv: []string{"server", "--stdio"}, Getenv: env(map[string]string{"PATH": "relative:" + bin})})
	if err != nil {
		t.Fatal(err)
	}
	if p.Executable.Path != prog || p.Executable.SHA256 != fileSHA256(t, prog) || p.Tree != nil {
		t.Errorf("executable %+v, tree %+v", p.Executable, p.Tree)
	}
	if !slices.Equal(p.Argv, []string{"server", "--stdio"}) || p.Cwd != "/" {
		t.Errorf("argv %q, cwd %q", p.Argv, p.Cwd)
	}
	// Conservative defaults.
	if p.Network.Mode != NetworkNone || !slices.Equal(p.Require, AllConfinements) || len(p.Env.Pass) != 0 || len(p.Env.Set) != 0 {
		t.Errorf("defaults: network %v, require %v, env %+v", p.Network, p.Require, p.Env)
	}
	if p.Filesystem.ReadWrite[0] != "/dev/null" || len(p.Filesystem.ReadWrite) != 1 {
		t.Errorf("read_write %v", p.Filesystem.ReadWrite)
	}
	if _, _, err := Propose(ProposeOptions{Name: "srv", Argv: []string{"server"}, Getenv: env(map[string]string{"PATH": "relative"})}); err == nil {
		t.Error("a program only on a relative PATH entry was found")
	}
}

// TestProposeScriptPinsInterpreter: a #! script is replaced by its
// interpreter as the executable and the script's package as the tree.
func TestProposeScriptPinsInterpreter(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	node := fakeProgram(t, bin, "node")
	pkg := t.TempDir()
	writeFile(t, filepath.Join(pkg, "package.json"), `{"name":"srv"}`, 0o644)
	script := filepath.Join(pkg, "dist", "index.js")
	writeFile(t, script, "#!/usr/bin/env node\nconsole.log(1)\n", 0o755)
	p, notes, err := Propose(ProposeOptions{Name: "srv", Argv: []string{script, "--x"}, Getenv: env(map[string]string{"PATH": bin})})
	if err != nil {
		t.Fatal(err)
	}
	if p.Executable.Path != node || !slices.Equal(p.Argv, []string{"node", script, "--x"}) {
		t.Errorf("executable %s, argv %q", p.Executable.Path, p.Argv)
	}
	if p.Tree == nil || p.Tree.Path != pkg || p.Cwd != pkg {
		t.Errorf("tree %+v, cwd %s", p.Tree, p.Cwd)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "#! script") {
		t.Errorf("notes %q", notes)
	}
	// The interpreter and its script, explicitly: the same.
	q, _, err := Propose(ProposeOptions{Name: "srv", Argv: []string{"node", "dist/index.js", "--x"}, Dir: pkg, Getenv: env(map[string]string{"PATH": bin})})
	if err != nil {
		t.Fatal(err)
	}
	if q.Executable != p.Executable || !slices.Equal(q.Argv, p.Argv) || q.Tree.Digest != p.Tree.Digest {
		t.Errorf("node dist/index.js: %+v %q %+v", q.Executable, q.Argv, q.Tree)
	}
}

func TestProposeNPXUsesInstalledPackage(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	node := fakeProgram(t, bin, "node")
	home := t.TempDir()
	nm := filepath.Join(home, ".npm", "_npx", "9e1f", "node_modules")
	pkg := filepath.Join(nm, "@modelcontextprotocol", "server-memory")
	writeFile(t, filepath.Join(pkg, "package.json"), `{"name":"@modelcontextprotocol/server-memory","version":"1.2.3","bin":{"mcp-server-memory":"dist/index.js"}}`, 0o644)
	writeFile(t, filepath.Join(pkg, "dist", "index.js"), "#!/usr/bin/env node\n", 0o755)
	writeFile(t, filepath.Join(nm, "zod", "index.js"), "module.exports = {}\n", 0o644)
	getenv := env(map[string]string{"PATH": bin, "HOME": home})
	p, _, err := Propose(ProposeOptions{Name: "memory", Argv: []string{"npx", "-y", "@modelcontextprotocol/server-memory", "--flag"}, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"node", filepath.Join(pkg, "dist", "index.js"), "--flag"}
	if p.Executable.Path != node || !slices.Equal(p.Argv, want) {
		t.Errorf("executable %s, argv %q, want %q", p.Executable.Path, p.Argv, want)
	}
	if p.Tree == nil || p.Tree.Path != nm {
		t.Errorf("tree %+v, want the cache's node_modules %s", p.Tree, nm)
	}
	if _, _, err := Propose(ProposeOptions{Name: "memory", Argv: []string{"npx", "-y", "@modelcontextprotocol/server-memory@9.9.9"}, Getenv: getenv}); err == nil || !strings.Contains(err.Error(), "run it once") {
		t.Errorf("a version that is not installed: %v", err)
	}
	if _, _, err := Propose(ProposeOptions{Name: "memory", Argv: []string{"npx", "--registry", "https://evil.example", "x"}, Getenv: getenv}); err == nil {
		t.Error("an npx option that changes what runs was accepted")
	}
}

func TestProposeUVXUsesInstalledEnvironment(t *testing.T) {
	t.Parallel()
	pyhome := t.TempDir()
	python := fakeProgram(t, filepath.Join(pyhome, "bin"), "python3.12")
	cache := t.TempDir()
	envDir := filepath.Join(cache, "archive-v0", "Xk3p")
	if err := os.MkdirAll(filepath.Join(envDir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	venvPython := filepath.Join(envDir, "bin", "python")
	if err := os.Symlink(python, venvPython); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(envDir, "pyvenv.cfg"), "home = "+filepath.Dir(python)+"\n", 0o644)
	tool := filepath.Join(envDir, "bin", "mcp-server-time")
	writeFile(t, tool, "#!"+venvPython+"\nimport sys\n", 0o755)
	p, _, err := Propose(ProposeOptions{Name: "time", Argv: []string{"uvx", "mcp-server-time", "--local-timezone", "UTC"}, Getenv: env(map[string]string{"UV_CACHE_DIR": cache})})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{venvPython, tool, "--local-timezone", "UTC"}
	if p.Executable.Path != python || !slices.Equal(p.Argv, want) {
		t.Errorf("executable %s, argv %q, want %q", p.Executable.Path, p.Argv, want)
	}
	if p.Tree == nil || p.Tree.Path != envDir {
		t.Errorf("tree %+v, want %s", p.Tree, envDir)
	}
	if !slices.Contains(p.Filesystem.ReadOnly, pyhome) {
		t.Errorf("read_only %v lacks the interpreter's prefix %s", p.Filesystem.ReadOnly, pyhome)
	}
}
