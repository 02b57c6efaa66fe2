package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const localServerJS = `const rl = require('readline').createInterface({input: process.stdin});
rl.on('line', (l) => { const m = JSON.parse(l); if (m.id === undefined) return;
  const r = m.method === 'initialize' ? {protocolVersion: '2025-06-18', capabilities: {tools: {}}}
    : m.method === 'tools/list' ? {tools: [{name: 'search_docs', inputSchema: {type: 'object'}}]} : null;
  process.stdout.write(JSON.stringify(r ? {jsonrpc: '2.0', id: m.id, result: r} : {jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'no'}}) + '\n'); });
`

func TestCrawlCommandWithLocalSeed(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("this test starts a Node.js server: install Node.js")
	}
	dir, pub := logFixture(t)
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "server.js"), []byte(localServerJS), 0o644)
	seed := filepath.Join(work, "seed.json")
	os.WriteFile(seed, []byte(`{"servers": [{"name": "internal-docs", "command": ["node", "server.js"]}]}`), 0o644)
	out, errs, code := mcpseal(t, "crawl", "--log", dir, "--seed", seed, "--registry", "http://127.0.0.1:1/", "--json")
	if code != 0 {
		t.Fatalf("%d %s %s", code, out, errs)
	}
	var sum struct {
		Version, Probed, New int
		Confined             bool
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Version != 1 || sum.Probed != 1 || sum.New != 1 || !sum.Confined {
		t.Fatalf("sandboxed crawl: %v %s %s", err, out, errs)
	}
	if strings.Contains(errs, "without a sandbox") {
		t.Fatalf("sandbox warning on a confined crawl: %s", errs)
	}
	// Unconfined on request, and said so.
	_, errs, code = mcpseal(t, "crawl", "--log", dir, "--seed", seed, "--registry", "http://127.0.0.1:1/", "--json", "--no-sandbox")
	if code != 0 || !strings.Contains(errs, "without a sandbox") {
		t.Fatalf("--no-sandbox: %d %s", code, errs)
	}
	out, _, code = mcpseal(t, "log", "verify", dir, "--key", pub)
	if code != 0 || !strings.Contains(out, "1 entries, 1 servers") {
		t.Fatalf("%d %s", code, out)
	}
	// A second run: unchanged, nothing appended.
	out, _, _ = mcpseal(t, "crawl", "--log", dir, "--seed", seed, "--registry", "http://127.0.0.1:1/")
	if !strings.Contains(out, "0 new, 0 changed, 1 unchanged") {
		t.Fatalf("%s", out)
	}
}

func TestCrawlCommandNeedsSomethingToCrawl(t *testing.T) {
	dir, _ := logFixture(t)
	if _, _, code := mcpseal(t, "crawl", "--log", dir); code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
	if _, _, code := mcpseal(t, "crawl", "--log", dir, "--source", "pypi"); code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
}
