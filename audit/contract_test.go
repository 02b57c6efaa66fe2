package audit_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/audit/audittest"
)

// fileBacking is one home folder's audit log for the contract suite.
type fileBacking struct{ home string }

func (b fileBacking) Writer(t *testing.T) audittest.Writer {
	lg, err := audit.Open(b.home, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	return lg
}

func (b fileBacking) Verify(t *testing.T) *audit.Report {
	rep, err := audit.Verify(b.home)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func (b fileBacking) Tail(t *testing.T, n int) []audit.Event {
	es, _, err := audit.Tail(b.home, n)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// edit rewrites current.jsonl's lines with f.
func (b fileBacking) edit(t *testing.T, f func([][]byte) [][]byte) {
	p := filepath.Join(audit.Dir(b.home), "current.jsonl")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := f(bytes.SplitAfter(data, []byte("\n")))
	if err := os.WriteFile(p, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (b fileBacking) EditLine(t *testing.T, seq int64) {
	b.edit(t, func(l [][]byte) [][]byte {
		l[seq-1] = bytes.Replace(l[seq-1], []byte(`"alpha"`), []byte(`"alphb"`), 1)
		return l
	})
}

func (b fileBacking) DeleteLine(t *testing.T, seq int64) {
	b.edit(t, func(l [][]byte) [][]byte { return append(l[:seq-1], l[seq:]...) })
}

func (b fileBacking) CutEnd(t *testing.T, n int) {
	b.edit(t, func(l [][]byte) [][]byte {
		// SplitAfter leaves an empty last element after the final newline.
		return l[:len(l)-1-n]
	})
}

// TestLogContract runs the audit log contract suite against the files;
// pgstate runs it against PostgreSQL.
func TestLogContract(t *testing.T) {
	t.Parallel()
	audittest.Run(t, func(t *testing.T) audittest.Backing { return fileBacking{home: t.TempDir()} })
}
