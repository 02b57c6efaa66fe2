package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConformanceThroughGateway runs scripts/conformance: the official MCP
// conformance suite (npm @modelcontextprotocol/conformance 0.1.16 and
// 0.2.0-alpha.12 on Node 22, pinned by e2e/conformance/package-lock.json)
// against the go-sdk conformance everything-server, directly and through
// `mcpseal gateway` by a command route and by a url route, for specs
// 2025-11-25 and 2026-07-28. Every check that passes directly must pass
// through the gateway, dns-rebinding-protection included. The script
// installs the suite with npm ci; the test fails, never skips, when it
// cannot.
func TestConformanceThroughGateway(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: the conformance runs take about a minute")
	}
	out := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(repoRoot, "scripts", "conformance"), "--out", out)
	cmd.Dir = repoRoot
	cmd.Env = environ(t, home(t))
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code, ok := waitExit(cmd, 8*time.Minute)
	t.Logf("scripts/conformance:\n%s", tail(log.String(), 40))
	if !ok {
		t.Fatal("scripts/conformance did not finish within 8 minutes")
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatalf("scripts/conformance (exit %d) wrote no summary: %v", code, err)
	}
	var sum struct {
		Runs map[string]map[string]struct {
			Passed int      `json:"passed"`
			OK     []string `json:"ok"`
		} `json:"runs"`
		Regressions []string `json:"regressions"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Regressions {
		t.Errorf("regression: %s", r)
	}
	want := []string{"0.1.16-2025-11-25", "next-2025-11-25", "next-2026-07-28"}
	for _, w := range want {
		direct := sum.Runs["direct-"+w]
		if len(direct) == 0 {
			t.Errorf("no direct run of %s", w)
			continue
		}
		for _, path := range []string{"cmd-", "url-"} {
			run := sum.Runs[path+w]
			if len(run) == 0 {
				t.Errorf("no run %s%s", path, w)
				continue
			}
			if d, g := run["dns-rebinding-protection"].Passed, direct["dns-rebinding-protection"].Passed; g != d || g == 0 {
				t.Errorf("%s%s: dns-rebinding-protection passed %d checks, directly %d", path, w, g, d)
			}
			for sc, d := range direct {
				if g := run[sc].Passed; g < d.Passed {
					t.Errorf("%s%s: %s passed %d checks, directly %d", path, w, sc, g, d.Passed)
				}
			}
		}
	}
	if code != 0 && len(sum.Regressions) == 0 {
		t.Errorf("scripts/conformance exited %d", code)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
