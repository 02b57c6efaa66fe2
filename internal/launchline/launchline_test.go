package launchline

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "internal/launchline")
}

func TestSplit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		command string
		args    []string
		is      bool
		offset  int
		version string
		refused bool
	}{
		{"binary", "/usr/local/bin/mcpseal", []string{"run", "--", "x"}, true, 0, "", false},
		{"windows binary", `C:\tools\MCPSEAL.EXE`, []string{"run"}, true, 0, "", false},
		{"self", "/opt/gate", []string{"run"}, true, 0, "", false},
		{"npx -y", "npx", []string{"-y", "mcpseal@0.3.0", "run", "--", "x"}, true, 2, "0.3.0", false},
		{"npx --yes", "npx", []string{"--yes", "mcpseal@1.2.3-rc.1", "run"}, true, 2, "1.2.3-rc.1", false},
		{"npx without -y", "npx", []string{"mcpseal@0.3.0", "run"}, true, 1, "0.3.0", false},
		{"npx.cmd", `C:\Program Files\nodejs\npx.cmd`, []string{"-y", "mcpseal@0.3.0", "run"}, true, 2, "0.3.0", false},
		{"attack: floating latest", "npx", []string{"-y", "mcpseal@latest", "run"}, true, 2, "latest", true},
		{"attack: no version", "npx", []string{"-y", "mcpseal", "run"}, true, 2, "", true},
		{"attack: range", "npx", []string{"-y", "mcpseal@^0.3.0", "run"}, true, 2, "^0.3.0", true},
		{"attack: other package", "npx", []string{"-y", "--package=evil@1.0.0", "mcpseal@0.3.0", "run"}, true, 3, "0.3.0", true},
		{"attack: -p spec", "npx", []string{"-p", "mcpseal@0.3.0", "mcpseal", "run"}, true, 2, "0.3.0", true},
		{"a server", "npx", []string{"-y", "@modelcontextprotocol/server-memory"}, false, 0, "", false},
		{"a server named like us", "npx", []string{"-y", "mcpseal-lookalike@1.0.0"}, false, 0, "", false},
		{"a server taking mcpseal", "npx", []string{"-y", "server", "mcpseal@0.3.0"}, false, 0, "", false},
		{"empty npx", "npx", nil, false, 0, "", false},
		{"node", "node", []string{"mcpseal@0.3.0"}, false, 0, "", false},
	} {
		l, ok := Split(c.command, c.args, "/opt/gate")
		if ok != c.is || (ok && (l.Offset != c.offset || l.NPX != c.version || (l.Err != nil) != c.refused)) {
			t.Errorf("%s: Split = %+v, %v", c.name, l, ok)
		}
	}
}

func TestNPXArgs(t *testing.T) {
	t.Parallel()
	a := NPXArgs("0.3.0", "run", "--name", "m")
	l, ok := Split("npx", a, "")
	if !ok || l.Err != nil || l.Offset != 2 || a[l.Offset] != "run" {
		t.Errorf("NPXArgs does not split back: %v -> %+v %v", a, l, ok)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("npx", "-y", "mcpseal@0.3.0", "run")
	f.Add("npx", "--yes", "mcpseal", "run")
	f.Add("mcpseal", "run", "--", "x")
	f.Fuzz(func(t *testing.T, command, a, b, c string) {
		args := []string{a, b, c}
		l, ok := Split(command, args, "")
		if !ok {
			return
		}
		if l.Offset < 0 || l.Offset > len(args) {
			t.Fatalf("offset %d of %d args", l.Offset, len(args))
		}
		if l.Err == nil && l.NPX != "" && !ValidVersion(l.NPX) {
			t.Fatalf("accepted version %q", l.NPX)
		}
	})
}
