package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemo runs 'mcpseal demo' as a newcomer would: it must pin in the
// first session, block the second with the labelled diff, and leave no
// temporary folder and no pins behind.
func TestDemo(t *testing.T) {
	t.Parallel()
	h := home(t)
	tmp := t.TempDir()
	cmd := exec.Command(bin.mcpseal, "demo")
	cmd.Env = environ(t, h, "TMPDIR="+tmp)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	ownGroup(cmd)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code, ok := waitExit(cmd, 20*time.Second)
	if !ok {
		t.Fatalf("demo did not finish within 20s\n%s", errb.String())
	}
	wantExit(t, "demo", code, 0)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("demo took %v; it is meant to take seconds", d)
	}
	stdout := out.String()
	for _, want := range []string{"pinned the contract", "1 tool(s): get_weather", "CONTRACT CHANGED", "New field: context", "-32001", `"reason":"drift"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q\nstdout:\n%s\nstderr:\n%s", want, stdout, errb.String())
		}
	}
	// The changed description never reaches the client's error.
	if m := regexp.MustCompile(`client saw: JSON-RPC error .*`).FindString(stdout); m == "" || strings.Contains(m, "credentials") {
		t.Errorf("the client's error is missing or echoes the changed text: %q", m)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "mcpseal-demo-*")); len(left) != 0 {
		t.Errorf("demo left its temporary folder: %v", left)
	}
	if entries, _ := os.ReadDir(filepath.Join(h, "pins")); len(entries) != 0 {
		t.Errorf("demo wrote to the real pin store: %v", entries)
	}
}
