//go:build linux

package crawl

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/launch"
)

// The sandbox re-executes the running binary as its helper (/proc/self/exe
// sandbox-init): in a test binary, run the helper instead of the tests.
func init() {
	if len(os.Args) > 1 && os.Args[1] == launch.HelperCommand {
		os.Exit(launch.HelperMain(os.Args[2:]))
	}
}

// probeServerJS is a minimal stdio MCP server that names its only tool
// after what it could do at start: read a file outside its package, and
// write one.
const probeServerJS = `
const fs = require('fs');
let name = 'sealed';
try { fs.readFileSync(process.env.SECRET_PATH); name = 'read-leaked'; } catch (e) {}
try { fs.writeFileSync(process.env.SECRET_PATH + '.w', 'x'); name = 'write-leaked'; } catch (e) {}
let buf = '';
process.stdin.on('data', d => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1);
    let m; try { m = JSON.parse(line); } catch (e) { continue; }
    if (m.id === undefined) continue;
    let result;
    if (m.method === 'initialize') result = {protocolVersion: m.params.protocolVersion, capabilities: {tools: {}}, serverInfo: {name: 'fixture', version: '1'}};
    else if (m.method === 'tools/list') result = {tools: [{name, inputSchema: {type: 'object'}}]};
    else { process.stdout.write(JSON.stringify({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'no'}}) + '\n'); continue; }
    process.stdout.write(JSON.stringify({jsonrpc: '2.0', id: m.id, result}) + '\n');
  }
});
`

// TestSandboxedProbeCannotReadOutsideItsPackage: a probed package runs
// confined: it lists normally, but reading or writing a file outside its
// own folder and its HOME fails.
func TestSandboxedProbeCannotReadOutsideItsPackage(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required for the sandboxed probe test (the end-to-end peers need it too)")
	}
	root := t.TempDir()
	pkg := filepath.Join(root, "package")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"fixture","version":"1.0.0","main":"index.js"}`), 0o644)
	os.WriteFile(filepath.Join(pkg, "index.js"), []byte(probeServerJS), 0o644)
	secret := filepath.Join(root, "id_rsa")
	os.WriteFile(secret, []byte("MARKER-SECRET"), 0o600)
	home := filepath.Join(root, "home")
	os.MkdirAll(home, 0o700)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env := append(probeEnv(home), "SECRET_PATH="+secret)
	proc, err := SandboxLauncher{}.Start(ctx, Command{Argv: []string{node, filepath.Join(pkg, "index.js")}, Dir: pkg, Env: env})
	if err != nil {
		t.Fatalf("sandboxed start: %v", err)
	}
	res, err := Probe(ctx, proc)
	proc.Stop()
	if err != nil {
		t.Fatalf("probe: %v (stderr %q)", err, proc.StderrTail())
	}
	tools := res.Contract.Defs[contract.Tools]
	if len(tools) != 1 || tools[0].Name != "sealed" {
		t.Fatalf("probed server listed %v; want only 'sealed' (it could reach the secret)", tools)
	}
	if _, err := os.Stat(secret + ".w"); err == nil {
		t.Error("the probed server wrote outside its folder")
	}
	// The same server unconfined does read it: the test can fail.
	proc, err = DirectLauncher{}.Start(ctx, Command{Argv: []string{node, filepath.Join(pkg, "index.js")}, Dir: pkg, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	res, err = Probe(ctx, proc)
	proc.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if tools := res.Contract.Defs[contract.Tools]; len(tools) != 1 || tools[0].Name == "sealed" {
		t.Errorf("unconfined control run listed %v; the fixture does not detect access", tools)
	}
}
