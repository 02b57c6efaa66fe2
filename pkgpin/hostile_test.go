package pkgpin

import (
	"slices"
	"strings"
	"testing"
)

// hostileVersions are strings that must never reach a command line as a
// version: shell text, option injection, git and URL specs, ranges,
// control characters.
var hostileVersions = []string{
	"1.0.0 && calc", "1.0.0;calc", "1.0.0|calc", "$(calc)", "`calc`", "1.0.0\ncalc", "1.0.0\r\n",
	"github:evil/x", "git+https://evil.example/x", "https://evil.example/x.tgz", "file:../x",
	"--registry=https://evil.example", "-c calc", "^1.0.0", "~1.0.0", ">=1.0.0", "1.x", "*", "latest",
	"1.0.0 ", " 1.0.0", "1.0.0\x00", "1.0.0+build", "1.0.0-", "1.0.0\u200b", "１.0.0",
	strings.Repeat("1", 100) + ".0.0",
}

// TestHostileVersionNeverReachesArgv: a tampered or hostile pin is refused
// before any command line is built, in every ecosystem.
func TestHostileVersionNeverReachesArgv(t *testing.T) {
	t.Parallel()
	launches := map[Ecosystem][]string{
		NPM:  {"npx", "-y", "@acme/x"},
		PyPI: {"uvx", "acme"},
	}
	for eco, argv := range launches {
		for _, v := range hostileVersions {
			p := &Package{Ecosystem: eco, Name: "@acme/x", Version: v, Integrity: "sha512-" + strings.Repeat("A", 86) + "=="}
			if eco == PyPI {
				p = &Package{Ecosystem: eco, Name: "acme", Version: v, Files: []File{{Name: "acme.tar.gz", SHA256: strings.Repeat("0", 64)}}}
			}
			if ValidVersion(eco, v) {
				t.Errorf("%s: ValidVersion(%q) = true", eco, v)
			}
			got, err := Rewrite(argv, p)
			if err == nil {
				t.Errorf("%s: Rewrite with version %q = %q, want an error", eco, v, got)
			}
			for _, a := range got {
				if strings.Contains(a, v) {
					t.Errorf("%s: %q reached argv %q", eco, v, got)
				}
			}
		}
	}
}

// TestHostileSpecInConfigRefused: the same strings written in the config's
// package spec are refused by Recognize.
func TestHostileSpecInConfigRefused(t *testing.T) {
	t.Parallel()
	for _, v := range hostileVersions {
		if v == "latest" {
			continue
		}
		for _, argv := range [][]string{
			{"npx", "-y", "acme@" + v},
			{"uvx", "acme==" + v},
			{"pipx", "run", "--spec", "acme==" + v, "acme"},
		} {
			if l, err := Recognize(argv); err == nil {
				t.Errorf("Recognize(%q) = %+v, want an error", argv, l)
			}
		}
	}
}

// FuzzRewrite: whatever the command line and the pin, a rewritten command
// line differs from the original in at most the package spec, and what
// was put there holds the locked version, which is a plain version.
func FuzzRewrite(f *testing.F) {
	for _, s := range []string{"npx\x00-y\x00@acme/x", "uvx\x00acme==1.0", "pipx\x00run\x00acme", "npx\x00--package=a\x00--\x00b", "docker\x00run\x00-i\x00a@sha256:" + strings.Repeat("0", 64)} {
		f.Add(s, "1.0.0")
	}
	v := loadVectors(f)
	for _, r := range v.Recognize {
		f.Add(strings.Join(r.Argv, "\x00"), "2.0.0")
	}
	f.Fuzz(func(t *testing.T, line, version string) {
		argv := strings.Split(line, "\x00")
		l, err := Recognize(argv)
		if err != nil || l == nil || l.Ecosystem == OCI {
			return
		}
		p := &Package{Ecosystem: l.Ecosystem, Name: l.Name, Version: version, Requested: l.Tag,
			Integrity: "sha512-" + strings.Repeat("A", 86) + "=="}
		if l.Ecosystem == PyPI {
			p.Integrity, p.Requested = "", ""
			p.Files = []File{{Name: "a.tar.gz", SHA256: strings.Repeat("0", 64)}}
		}
		got, err := Rewrite(argv, p)
		if err != nil {
			return
		}
		if !ValidVersion(l.Ecosystem, version) {
			t.Fatalf("rewrote with invalid version %q: %q", version, got)
		}
		changed := 0
		for i, a := range got {
			if i < len(argv) && a == argv[i] && len(got) == len(argv) {
				continue
			}
			changed++
		}
		if len(got) == len(argv) && changed > 1 {
			t.Fatalf("rewrite changed %d arguments: %q -> %q", changed, argv, got)
		}
		if !slices.ContainsFunc(got, func(a string) bool { return strings.HasSuffix(a, version) }) {
			t.Fatalf("no argument carries the version: %q", got)
		}
	})
}

// FuzzRecognize: recognition never panics and never accepts a version
// that is not plain.
func FuzzRecognize(f *testing.F) {
	for _, r := range loadVectors(f).Recognize {
		f.Add(strings.Join(r.Argv, "\x00"))
	}
	f.Fuzz(func(t *testing.T, line string) {
		l, err := Recognize(strings.Split(line, "\x00"))
		if err != nil || l == nil {
			return
		}
		if l.Version != "" && !ValidVersion(l.Ecosystem, l.Version) {
			t.Fatalf("accepted version %q", l.Version)
		}
		if l.Ecosystem != OCI && !ValidName(l.Ecosystem, l.Name) {
			t.Fatalf("accepted name %q", l.Name)
		}
	})
}
