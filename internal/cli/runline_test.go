package cli

import (
	"strings"
	"testing"
)

// TestRunSyntaxIsTheRunFlagSet: launch lines are read exactly as run
// reads its arguments; a line run would refuse is refused here.
func TestRunSyntaxIsTheRunFlagSet(t *testing.T) {
	s := RunSyntax()
	for _, f := range []string{"name", "posture", "max-frame", "verify-timeout", "log-level"} {
		if !s.Has(f) {
			t.Errorf("Has(%q) = false", f)
		}
	}
	if s.Has("bogus") {
		t.Error("Has(bogus) = true")
	}
	cases := []struct {
		args    []string
		err     string
		name    string
		posture string
		argv    string
	}{
		{[]string{"--name", "files", "--", "npx", "-y", "srv", "--flag"}, "", "files", "guard", "npx -y srv --flag"},
		{[]string{"--posture", "strict", "--", "node", "s.js"}, "", "", "strict", "node s.js"},
		{[]string{"--", "npx"}, "", "", "guard", "npx"},
		{[]string{"--bogus", "--", "npx"}, "unknown flag", "", "", ""},
		{[]string{"--name", "x", "npx"}, "after --", "", "", ""},
		{[]string{"--name", "x", "--"}, "after --", "", "", ""},
		{[]string{"--posture", "lenient", "--", "npx"}, "posture", "", "", ""},
		{[]string{"--max-frame", "10", "--", "npx"}, "max-frame", "", "", ""},
		{[]string{"--log-level", "loud", "--", "npx"}, "log level", "", "", ""},
	}
	for _, c := range cases {
		l, err := s.Parse(c.args)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if l.Name != c.name || l.Posture != c.posture || strings.Join(l.Argv, " ") != c.argv || l.HasName != (c.name != "") {
			t.Errorf("%q: %+v", c.args, l)
		}
	}
}
