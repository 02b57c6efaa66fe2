package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunAloneIsTheSameCommand: `mcpseal run ...` builds only the run
// command under the root; its help, its usage errors and their exit
// statuses are byte for byte those of run in the whole command tree.
func TestRunAloneIsTheSameCommand(t *testing.T) {
	t.Parallel()
	cases := [][]string{
		{"run", "--help"},
		{"run", "-h"},
		{"run"},
		{"run", "--no-such-flag"},
		{"run", "--name"},
		{"run", "--name", "x"},
		{"run", "help"},
	}
	for _, args := range cases {
		var aloneOut, aloneErr bytes.Buffer
		alone := newRoot(&env{stdin: strings.NewReader(""), stdout: &aloneOut, stderr: &aloneErr, getenv: func(string) string { return "" }}, args)
		if n := len(alone.Commands()); n != 1 {
			t.Fatalf("%q: %d commands under the root, want run alone", args, n)
		}
		var wholeOut, wholeErr bytes.Buffer
		whole := newRoot(&env{stdin: strings.NewReader(""), stdout: &wholeOut, stderr: &wholeErr, getenv: func(string) string { return "" }}, nil)
		if len(whole.Commands()) < 2 {
			t.Fatal("the whole tree has one command")
		}
		alone.SetArgs(args)
		whole.SetArgs(args)
		aerr, werr := alone.Execute(), whole.Execute()
		if (aerr == nil) != (werr == nil) || (aerr != nil && aerr.Error() != werr.Error()) {
			t.Errorf("%q: error %v, in the whole tree %v", args, aerr, werr)
		}
		if aloneOut.String() != wholeOut.String() || aloneErr.String() != wholeErr.String() {
			t.Errorf("%q: output differs from the whole tree's:\n%s%s\n---\n%s%s", args, aloneOut.String(), aloneErr.String(), wholeOut.String(), wholeErr.String())
		}
	}
}
