package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/audit"
)

// runCLI runs mcpseal with args and returns the exit status and output.
// stderr takes concurrent writers, as os.Stderr does (run's logger and
// the relay of the server's stderr both write to it); all are done when
// Main returns.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &lockedWriter{w: &errOut})
	return code, out.String(), errOut.String()
}

// auditHomeWith points MCPSEAL_HOME at a fresh folder holding n events.
func auditHomeWith(t *testing.T, n int) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("MCPSEAL_HOME", home)
	if n == 0 {
		return home
	}
	l, err := audit.Open(home, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range n {
		e := audit.Event{Op: audit.OpCall, Outcome: audit.Refused, Server: "3f9a0c1d2b4e5f60", Label: "memory",
			Tool: "delete_entities", Code: "denied", Stage: "before_tool_call", Provider: "builtin", Bytes: int64(i + 1)}
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func TestAuditVerifyAndTailCommands(t *testing.T) {
	auditHomeWith(t, 5)
	code, out, errOut := runCLI(t, "audit", "verify")
	if code != 0 || !strings.Contains(out, "audit log ok: 5 events (1 to 5) in 1 files") {
		t.Fatalf("verify: %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "audit", "tail", "-n", "2")
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, "memory (3f9a0c1d2b4e5f60)") || !strings.Contains(out, "tool=delete_entities code=denied") || !strings.Contains(out, "bytes=5") {
		t.Fatalf("tail: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "audit", "tail", "--json")
	var tj auditTailJSON
	if err := json.Unmarshal([]byte(out), &tj); code != 0 || err != nil || tj.Version != 1 || len(tj.Events) != 5 || tj.Events[4].Seq != 5 {
		t.Fatalf("tail --json: %d %v\n%s", code, err, out)
	}
	code, out, _ = runCLI(t, "audit", "verify", "--json")
	var vj struct {
		Version int  `json:"version"`
		OK      bool `json:"ok"`
		Events  int  `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &vj); code != 0 || err != nil || vj.Version != 1 || !vj.OK || vj.Events != 5 {
		t.Fatalf("verify --json: %d %v\n%s", code, err, out)
	}
	if code, _, errOut := runCLI(t, "audit", "tail", "-n", "0"); code != ExitUsage || !strings.Contains(errOut, "-n must be between 1 and") {
		t.Errorf("tail -n 0: %d %s", code, errOut)
	}
}

// TestTamperedAuditLogFailsVerifyCommand: a changed line makes the
// command exit 1 and name the line.
func TestTamperedAuditLogFailsVerifyCommand(t *testing.T) {
	home := auditHomeWith(t, 5)
	path := filepath.Join(audit.Dir(home), "current.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines[2] = strings.Replace(lines[2], `"outcome":"refused"`, `"outcome":"allowed"`, 1)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "audit", "verify")
	if code != ExitFailure || !strings.Contains(out, "fault: current.jsonl:4: event 4 does not chain") || !strings.Contains(errOut, "mcpseal: error: the audit log failed verification (1 faults)") {
		t.Fatalf("%d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "audit", "verify", "--json"); code != ExitFailure || !strings.Contains(out, `"ok": false`) {
		t.Fatalf("--json: %d\n%s", code, out)
	}
}

func TestAuditCommandsOnEmptyHome(t *testing.T) {
	auditHomeWith(t, 0)
	if code, out, _ := runCLI(t, "audit", "verify"); code != 0 || !strings.Contains(out, "note: there is no audit log yet") || !strings.Contains(out, "audit log ok: no events yet") {
		t.Errorf("verify: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "audit", "tail"); code != 0 || !strings.Contains(out, "no audit events") {
		t.Errorf("tail: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "audit", "tail", "--json"); code != 0 || !strings.Contains(out, `"events": []`) {
		t.Errorf("tail --json: %d %s", code, out)
	}
}
