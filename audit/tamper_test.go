package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tamperedLog builds a log of 60 events over several rotated files
// (nothing pruned), applies tamper, and returns the verify report.
func tamperedLog(t *testing.T, tamper func(t *testing.T, home string)) *Report {
	t.Helper()
	l, home := openTest(t, Options{MaxFileBytes: 4096, MaxFiles: 100})
	appendN(t, l, 60)
	if rep := mustVerify(t, home); !rep.OK() || rep.Files < 3 {
		t.Fatalf("the untampered log: %+v\n%s", rep, faultText(rep))
	}
	tamper(t, home)
	return mustVerify(t, home)
}

func editCurrent(edit func([]string) []string) func(t *testing.T, home string) {
	return func(t *testing.T, home string) {
		writeLines(t, current(home), edit(readLines(t, current(home))))
	}
}

func rotatedPath(t *testing.T, home string, i int) string {
	t.Helper()
	fs, err := rotatedFiles(Dir(home))
	if err != nil || len(fs) <= i {
		t.Fatalf("rotated files: %v, %v", fs, err)
	}
	return filepath.Join(Dir(home), fs[i].name)
}

// TestTamperedAuditLogFailsVerify: each way of rewriting history is found.
func TestTamperedAuditLogFailsVerify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tamper func(t *testing.T, home string)
		want   string
	}{
		{"changed-outcome", editCurrent(func(ls []string) []string {
			ls[1] = strings.Replace(ls[1], `"outcome":"refused"`, `"outcome":"allowed"`, 1)
			ls[1] = strings.Replace(ls[1], `"outcome":"withheld"`, `"outcome":"allowed"`, 1)
			ls[1] = strings.Replace(ls[1], `"outcome":"warned"`, `"outcome":"allowed"`, 1)
			return ls
		}), "does not chain"},
		{"removed-middle-line", editCurrent(func(ls []string) []string { return append(ls[:1], ls[2:]...) }), "missing or out of order"},
		{"removed-last-line", editCurrent(func(ls []string) []string { return ls[:len(ls)-1] }), "removed from the end"},
		{"reordered-lines", editCurrent(func(ls []string) []string { ls[1], ls[2] = ls[2], ls[1]; return ls }), "out of order"},
		{"duplicated-line", editCurrent(func(ls []string) []string { return append(ls[:2], ls[1:]...) }), "out of order"},
		{"whitespace-added", editCurrent(func(ls []string) []string {
			ls[0] = strings.Replace(ls[0], `,"op"`, `, "op"`, 1)
			return ls
		}), "not in canonical form"},
		{"unknown-member-added", editCurrent(func(ls []string) []string {
			ls[0] = strings.Replace(ls[0], `{"v":1,`, `{"v":1,"note":"x",`, 1)
			return ls
		}), "does not parse"},
		{"oldest-rotated-file-removed", func(t *testing.T, home string) {
			if err := os.Remove(rotatedPath(t, home, 0)); err != nil {
				t.Fatal(err)
			}
		}, "no prune event accounts"},
		{"middle-rotated-file-removed", func(t *testing.T, home string) {
			if err := os.Remove(rotatedPath(t, home, 1)); err != nil {
				t.Fatal(err)
			}
		}, "missing or out of order"},
		{"line-changed-in-rotated-file", func(t *testing.T, home string) {
			p := rotatedPath(t, home, 0)
			ls := readLines(t, p)
			ls[3] = strings.Replace(ls[3], `"bytes":10`, `"bytes":99`, 1)
			writeLines(t, p, ls)
		}, "does not chain"},
		{"rotated-file-renamed", func(t *testing.T, home string) {
			p := rotatedPath(t, home, 1)
			if err := os.Rename(p, filepath.Join(Dir(home), rotatedName(9999))); err != nil {
				t.Fatal(err)
			}
		}, "out of order"},
		{"head-removed", func(t *testing.T, home string) {
			if err := os.Remove(filepath.Join(Dir(home), headName)); err != nil {
				t.Fatal(err)
			}
		}, "head file is missing"},
		{"head-garbled", func(t *testing.T, home string) {
			if err := os.WriteFile(filepath.Join(Dir(home), headName), []byte("garbage\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "head file is malformed"},
		{"everything-after-a-point-replaced", func(t *testing.T, home string) {
			// A forger rewrites the last event consistently in the chain
			// but cannot know to update the head as well.
			ls := readLines(t, current(home))
			e, err := parseLine([]byte(strings.TrimSuffix(ls[len(ls)-1], "\n")))
			if err != nil {
				t.Fatal(err)
			}
			e.Outcome = Allowed
			e.Code = "forged"
			line, _ := encode(&e)
			ls[len(ls)-1] = string(line) + "\n"
			writeLines(t, current(home), ls)
		}, "is not the event the head recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := tamperedLog(t, tt.tamper)
			if rep.OK() || !strings.Contains(faultText(rep), tt.want) {
				t.Errorf("faults:\n%s\nwant one mentioning %q", faultText(rep), tt.want)
			}
		})
	}
}

// TestRemovalStaysOnRecordAfterNextAppend: lines removed from the end and
// then papered over by a new append are recorded as a gap, which verify
// keeps reporting.
func TestRemovalStaysOnRecordAfterNextAppend(t *testing.T) {
	t.Parallel()
	l, home := openTest(t, Options{})
	appendN(t, l, 10)
	editCurrent(func(ls []string) []string { return ls[:7] })(t, home)
	if err := l.Append(callEvent(99)); err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, home)
	if rep.OK() || !strings.Contains(faultText(rep), "head-ahead") {
		t.Fatalf("faults:\n%s", faultText(rep))
	}
	evs, _, _ := Tail(home, 2)
	if len(evs) != 2 || evs[0].Op != OpGap || evs[0].Count != 3 {
		t.Errorf("the gap event: %+v", evs)
	}
}

// TestInterruptedAppendIsRepaired: bytes of a half-written line are a
// note, not a fault, and the next append removes them.
func TestInterruptedAppendIsRepaired(t *testing.T) {
	t.Parallel()
	l, home := openTest(t, Options{})
	appendN(t, l, 3)
	f, err := os.OpenFile(current(home), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"v":1,"seq":4,"ti`)
	f.Close()
	rep := mustVerify(t, home)
	if !rep.OK() || len(rep.Notes) == 0 {
		t.Fatalf("%+v\n%s", rep, faultText(rep))
	}
	if err := l.Append(callEvent(3)); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, home); !rep.OK() || rep.Events != 4 || len(rep.Notes) != 0 {
		t.Errorf("%+v\n%s", rep, faultText(rep))
	}
}

// TestUnreadableTailRefusesAppends: when the last event cannot be read,
// nothing can chain to it; Append fails (and a fail-closed gate refuses)
// rather than start a new chain.
func TestUnreadableTailRefusesAppends(t *testing.T) {
	t.Parallel()
	l, home := openTest(t, Options{})
	appendN(t, l, 3)
	editCurrent(func(ls []string) []string { ls[2] = "not json\n"; return ls })(t, home)
	if err := l.Append(callEvent(3)); err == nil {
		t.Error("appended after an unreadable last event")
	}
}
