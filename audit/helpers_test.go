package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testServer = "3f9a0c1d2b4e5f60"

var testDigest = strings.Repeat("ab", 32)

// fixedClock returns a clock that advances one second per call.
func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

// openTest opens a log under a fresh home.
func openTest(t testing.TB, o Options) (*Log, string) {
	t.Helper()
	home := t.TempDir()
	if o.Now == nil {
		o.Now = fixedClock()
	}
	l, err := Open(home, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, home
}

// callEvent is the i-th event of a test log.
func callEvent(i int) Event {
	outcomes := []Outcome{Allowed, Refused, Withheld, Warned}
	return Event{Op: OpCall, Outcome: outcomes[i%len(outcomes)], Server: testServer, Label: "memory", Tool: fmt.Sprintf("tool_%d", i),
		Stage: "before_tool_call", Code: "allowed", Provider: "builtin", Digest: testDigest, Bytes: int64(100 + i), Millis: int64(i)}
}

func appendN(t testing.TB, l *Log, n int) {
	t.Helper()
	for i := range n {
		if err := l.Append(callEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
}

func mustVerify(t *testing.T, home string) *Report {
	t.Helper()
	rep, err := Verify(home)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	s := strings.Join(lines, "")
	if !strings.HasSuffix(s, "\n") && s != "" {
		s += "\n"
	}
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func current(home string) string { return filepath.Join(Dir(home), currentName) }

func faultText(rep *Report) string {
	var b strings.Builder
	for _, f := range rep.Faults {
		fmt.Fprintf(&b, "%s:%d seq %d: %s\n", f.File, f.Line, f.Seq, f.Reason)
	}
	return b.String()
}
