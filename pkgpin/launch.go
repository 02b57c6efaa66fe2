package pkgpin

import (
	"fmt"
	"slices"
	"strings"
)

// A Launch is a command line recognised as running a registry package.
type Launch struct {
	Ecosystem Ecosystem
	// Tool is the launcher as a person would name it: "npx", "npm exec",
	// "pnpm dlx", "yarn dlx", "bunx", "uvx", "uv tool run", "pipx run",
	// "docker run", "podman run".
	Tool string
	// Name is the package name (PyPI: PEP 503 normalised), or the image
	// repository.
	Name string
	// Version is the exact version the command line asks for, "" when it
	// asks for none or for a tag.
	Version string
	// Tag is the tag asked for ("latest", "next"), "" when none.
	Tag string
	// Digest is the image digest (OCI), "" when the image is not pinned by
	// digest.
	Digest string

	// Where the package spec sits, for Rewrite.
	index  int    // argv index of the token holding the spec
	prefix string // text before the spec in that token ("--package=")
	spec   spec
	insert bool   // pipx run without --spec: the pin goes in as --spec before the app
	join   string // how the version joins the name when rewritten: "@" or "=="
}

// spec is a parsed package spec: name, extras (PyPI), and the version
// part as written.
type spec struct {
	name    string // as written
	extras  string // "[a,b]" or ""
	sep     string // "@" or "==" or ""
	version string // exact version, tag, or ""
}

// Recognize reports whether argv launches a package from npm, PyPI or an
// OCI registry. It returns nil and no error for any other command (a
// local binary, node server.js, python -m pkg). For a registry launch it
// cannot lock — a version range, a URL or git spec, a shell string, a
// registry or extra package chosen on the command line, an option it does
// not know — it returns an error wrapping ErrNotLockable.
func Recognize(argv []string) (*Launch, error) {
	if len(argv) == 0 {
		return nil, nil
	}
	tool := launcherName(argv[0])
	sub := func(i int, want string) bool { return len(argv) > i && argv[i] == want }
	switch {
	case tool == "npx":
		return parseNPM("npx", argv, 1)
	case tool == "npm" && (sub(1, "exec") || sub(1, "x")):
		return parseNPM("npm exec", argv, 2)
	case tool == "pnpm" && sub(1, "dlx"):
		return parseNPM("pnpm dlx", argv, 2)
	case tool == "yarn" && sub(1, "dlx"):
		return parseNPM("yarn dlx", argv, 2)
	case tool == "bunx":
		return parseNPM("bunx", argv, 1)
	case tool == "bun" && sub(1, "x"):
		return parseNPM("bunx", argv, 2)
	case tool == "uvx":
		return parseUV("uvx", argv, 1)
	case tool == "uv" && sub(1, "tool") && sub(2, "run"):
		return parseUV("uv tool run", argv, 3)
	case tool == "pipx" && sub(1, "run"):
		return parsePipx(argv, 2)
	case (tool == "docker" || tool == "podman") && sub(1, "run"):
		return parseOCI(tool+" run", argv, 2)
	}
	return nil, nil
}

// launcherName is argv[0]'s base name without a Windows suffix.
func launcherName(a string) string {
	if i := strings.LastIndexAny(a, `/\`); i >= 0 {
		a = a[i+1:]
	}
	a = strings.ToLower(a)
	for _, ext := range []string{".cmd", ".exe", ".bat", ".ps1"} {
		a = strings.TrimSuffix(a, ext)
	}
	return a
}

// Exact reports whether the command line names an exact version.
func (l *Launch) Exact() bool { return l.Version != "" }

// Requested is what the command line asks for, as a lock records it in
// Package.Requested: the tag, or "" for an exact version or nothing.
func (l *Launch) Requested() string { return l.Tag }

// Pinnable reports whether a lock can pin this launch: always for npm and
// PyPI, and for OCI only when the image is pinned by digest.
func (l *Launch) Pinnable() bool { return l.Ecosystem != OCI || l.Digest != "" }

// String describes the launch for people: "npx @acme/x (latest)".
func (l *Launch) String() string {
	switch {
	case l.Ecosystem == OCI && l.Digest != "":
		return l.Tool + " " + l.Name + "@" + l.Digest
	case l.Ecosystem == OCI:
		return l.Tool + " " + l.Name + " (not pinned by digest)"
	case l.Version != "":
		return l.Tool + " " + l.Name + "@" + l.Version
	case l.Tag != "":
		return l.Tool + " " + l.Name + " (tag " + l.Tag + ")"
	}
	return l.Tool + " " + l.Name + " (latest)"
}

// Rewrite returns the command line that runs exactly the locked package
// p: argv with the package spec set to p's version. It refuses (an error
// wrapping ErrMismatch) a command line that names another package, an
// exact version other than p's, or a tag other than "latest" or the one p
// was locked from, and a registry launch that p does not pin; it refuses
// (ErrNotLockable) what Recognize refuses. A command that is not a
// registry launch is returned unchanged when p is nil.
//
// argv is not modified. The version written is checked against
// ValidVersion again, so a tampered pin can never put anything but a
// plain version on the command line.
func Rewrite(argv []string, p *Package) ([]string, error) {
	l, err := Recognize(argv)
	if err != nil {
		return nil, err
	}
	if l == nil {
		if p != nil {
			return nil, fmt.Errorf("%w: the lock pins %s but the command does not launch it from a registry", ErrMismatch, p)
		}
		return slices.Clone(argv), nil
	}
	if p == nil {
		return nil, fmt.Errorf("%w: the command launches %s %s, which the lock does not pin", ErrMismatch, l.Ecosystem, quote(l.Name))
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%w: the locked package is invalid: %v", ErrMismatch, err)
	}
	if l.Ecosystem != p.Ecosystem || l.Name != p.Name {
		return nil, fmt.Errorf("%w: the command launches %s %s, the lock pins %s", ErrMismatch, l.Ecosystem, quote(l.Name), p)
	}
	if l.Ecosystem == OCI {
		if l.Digest != p.Digest {
			return nil, fmt.Errorf("%w: the command runs image %s, the lock pins %s", ErrMismatch, digestOrNone(l.Digest), p.Digest)
		}
		return slices.Clone(argv), nil
	}
	switch {
	case l.Version != "" && l.Version != p.Version:
		return nil, fmt.Errorf("%w: the command asks for %s %s, the lock pins %s", ErrMismatch, l.Name, quote(l.Version), p.Version)
	case l.Tag != "" && l.Tag != "latest" && l.Tag != p.Requested:
		return nil, fmt.Errorf("%w: the command asks for tag %s of %s, the lock was made from %s", ErrMismatch, quote(l.Tag), l.Name, tagOrLatest(p.Requested))
	}
	if !ValidVersion(p.Ecosystem, p.Version) {
		return nil, fmt.Errorf("%w: invalid locked version", ErrMismatch)
	}
	return l.rewrite(argv, p.Version), nil
}

// rewrite puts version (already validated) into the spec.
func (l *Launch) rewrite(argv []string, version string) []string {
	out := slices.Clone(argv)
	text := l.spec.name + l.spec.extras + l.join + version
	if l.insert {
		return slices.Concat(out[:l.index], []string{"--spec", text, l.spec.name}, out[l.index+1:])
	}
	out[l.index] = l.prefix + text
	return out
}

func digestOrNone(d string) string {
	if d == "" {
		return "by tag (no digest)"
	}
	return d
}

func tagOrLatest(t string) string {
	if t == "" {
		return "latest"
	}
	return "tag " + t
}

// baseArg splits "--name=value" into "--name" and "value".
func baseArg(a string) (flag, value string, hasValue bool) {
	if i := strings.IndexByte(a, '='); i > 0 && strings.HasPrefix(a, "-") {
		return a[:i], a[i+1:], true
	}
	return a, "", false
}

// notLockable builds an ErrNotLockable error.
func notLockable(tool, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrNotLockable, tool, fmt.Sprintf(format, args...))
}
