package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpseal/mcpseal/audit"
)

// TestAttackVerifyStreamToBelowCopyPasses: end to end through the CLI.
// The operator runs `audit verify --stream COPY --to 10` ("the copy must
// hold every event up to seq 10"); the receiver's copy lost 1..20 and
// holds 21..40. The check exits 0. Likewise `--from 1` on an empty copy.
func TestAttackVerifyStreamToBelowCopyPasses(t *testing.T) {
	t.Setenv("MCPSEAL_STATE", "")
	home := auditHomeWith(t, 40)
	lines, _, err := audit.ReadAfter(home, 0, 100)
	if err != nil || len(lines) != 40 {
		t.Fatal(len(lines), err)
	}
	var b bytes.Buffer
	for _, l := range lines[20:] {
		b.Write(l.Raw)
		b.WriteByte('\n')
	}
	dir := t.TempDir()
	tail := filepath.Join(dir, "tail.jsonl")
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(tail, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "audit", "verify", "--stream", tail, "--to", "10"); code == 0 {
		t.Errorf("--to 10 on a copy of 21..40 exits 0:\n%s%s", out, errOut)
	}
	if code, out, errOut := runCLI(t, "audit", "verify", "--stream", empty, "--from", "1"); code == 0 {
		t.Errorf("--from 1 on an empty copy (log of 40) exits 0:\n%s%s", out, errOut)
	}
}
