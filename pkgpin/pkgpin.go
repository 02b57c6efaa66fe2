// Package pkgpin pins the package behind a stdio MCP server: it recognises
// a launch from a registry in a command line, resolves the version the
// registry serves, records what the registry says that version contains,
// and rewrites the command line so that exactly the locked version runs.
//
// The same definitions can sit on new code: `npx -y some-server` fetches
// whatever was published last. A lock therefore records, next to the
// definitions, the package each server runs:
//
//	npm   exact version and dist.integrity    npx, npm exec / npm x, pnpm dlx,
//	                                          yarn dlx, bunx / bun x (-p/--package)
//	PyPI  exact version and every file's      uvx / uv tool run (--from),
//	      sha256                              pipx run (--spec)
//	OCI   the image digest                    docker run / podman run image@sha256:...
//
// # Worked example
//
// A project's .mcp.json says
//
//	"command": "npx", "args": ["-y", "@acme/mcp-files", "."]
//
// [Recognize] returns a [Launch] for npm package @acme/mcp-files with no
// version requested (latest). At lock time [Registry.Resolve] asks the
// registry for the latest release, 1.4.2, and records its dist.integrity.
// At run time [Rewrite] turns the command line into
//
//	npx -y @acme/mcp-files@1.4.2 .
//
// so new code runs only after a reviewed lock update. A config that asks
// for @acme/mcp-files@1.5.0, or for another package, is refused.
//
// # What reaches a command line
//
// Only a plain version string ever reaches a command line: each ecosystem
// has a strict regular expression ([ValidVersion]), checked when a version
// comes from the registry, when a lock is read and again just before a
// command line is rewritten. Version ranges (^1.2.0, >=1, 1.x), URLs,
// git and file specs (github:evil/x), shell text (1.0.0 && calc) and
// control characters are refused with an error, never passed on. Options
// this package does not know are refused too: when it cannot tell what a
// launcher will run, it says so rather than guess.
package pkgpin

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Ecosystem names a package registry.
type Ecosystem string

const (
	NPM  Ecosystem = "npm"
	PyPI Ecosystem = "pypi"
	OCI  Ecosystem = "oci"
)

// Package is a package pin, as a lock records it.
type Package struct {
	Ecosystem Ecosystem `json:"ecosystem"`
	// Name is the npm package name (@scope/name), the PyPI project name
	// normalised as in PEP 503, or the OCI repository.
	Name string `json:"name"`
	// Requested is the tag the config asked for when the lock was made
	// ("" for none, which means latest). Never set for OCI.
	Requested string `json:"requested,omitempty"`
	// Version is the exact version (npm, PyPI).
	Version string `json:"version,omitempty"`
	// Integrity is npm's dist.integrity of Version.
	Integrity string `json:"integrity,omitempty"`
	// Files are every file PyPI serves for Version, sorted by name.
	Files []File `json:"files,omitempty"`
	// Digest is the OCI image digest, "sha256:" and 64 hex digits.
	Digest string `json:"digest,omitempty"`
}

// File is one file of a PyPI release.
type File struct {
	Name   string `json:"filename"`
	SHA256 string `json:"sha256"`
}

// Errors callers branch on.
var (
	// ErrNotLockable: the command line launches a registry package in a
	// way that cannot be locked (a version range, a URL, an unknown option).
	ErrNotLockable = errors.New("pkgpin: launch cannot be locked")
	// ErrMismatch: the command line names another package or version than
	// the lock.
	ErrMismatch = errors.New("pkgpin: command does not match the locked package")
)

// Limits on the strings a pin may hold.
const (
	maxNameLen    = 214 // npm's own limit on package names; PyPI and OCI names are shorter in practice
	maxVersionLen = 64  // longer than any real version; a version is also a command-line argument
	maxFiles      = 4096
)

var (
	// semver 2.0 without build metadata, as npm publishes it.
	npmVersionRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(0|[1-9][0-9]{0,15})\.(0|[1-9][0-9]{0,15})\.(0|[1-9][0-9]{0,15})(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	})
	// PEP 440 release, pre, post and dev segments; no epoch, no local part.
	pypiVersionRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[0-9]{1,16}(\.[0-9]{1,16}){0,5}((a|b|rc)[0-9]{1,16})?(\.post[0-9]{1,16})?(\.dev[0-9]{1,16})?$`)
	})
	// A dist-tag that npm cannot read as a range: lowercase words.
	npmTagRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`) })
	npmNameRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(@[a-z0-9][a-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*$`)
	})
	pypiNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$`) })
	ociRepoRe  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9.-]*(:[0-9]{1,5})?/)?[a-z0-9]+([._-]{1,2}[a-z0-9]+)*(/[a-z0-9]+([._-]{1,2}[a-z0-9]+)*)*$`)
	})
	ociDigestRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[a-f0-9]{64}$`) })
	sha256Re    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-f0-9]{64}$`) })
	// npm dist.integrity: Subresource Integrity, sha512 (or sha1 for
	// releases older than 2017).
	integrityRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(sha512-[A-Za-z0-9+/]{86}==|sha1-[A-Za-z0-9+/]{27}=)$`)
	})
	pypiFileRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,254}$`) })
)

// ValidVersion reports whether v is a plain, exact version of ecosystem e
// — the only kind of version string that may reach a command line.
func ValidVersion(e Ecosystem, v string) bool {
	if len(v) > maxVersionLen {
		return false
	}
	switch e {
	case NPM:
		return npmVersionRe().MatchString(v)
	case PyPI:
		return pypiVersionRe().MatchString(v)
	}
	return false
}

// ValidName reports whether name is a package name of ecosystem e as
// this package accepts it.
func ValidName(e Ecosystem, name string) bool {
	if name == "" || len(name) > maxNameLen {
		return false
	}
	switch e {
	case NPM:
		return npmNameRe().MatchString(name)
	case PyPI:
		return pypiNameRe().MatchString(name)
	case OCI:
		return ociRepoRe().MatchString(name)
	}
	return false
}

// NormalizePyPI returns the PEP 503 form of a PyPI project name:
// lowercase, with every run of "-", "_" and "." replaced by one "-".
func NormalizePyPI(name string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(name) {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// Validate checks every field of p against the strict forms above. A
// lock reader calls it on every pin it loads.
func (p *Package) Validate() error {
	if !ValidName(p.Ecosystem, p.Name) {
		return fmt.Errorf("invalid %s package name %s", p.Ecosystem, quote(p.Name))
	}
	switch p.Ecosystem {
	case NPM, PyPI:
		if !ValidVersion(p.Ecosystem, p.Version) {
			return fmt.Errorf("invalid %s version %s", p.Ecosystem, quote(p.Version))
		}
		if p.Digest != "" {
			return fmt.Errorf("a %s pin has no digest", p.Ecosystem)
		}
		if p.Requested != "" && !validRequested(p.Ecosystem, p.Requested) {
			return fmt.Errorf("invalid requested tag %s", quote(p.Requested))
		}
	case OCI:
		if !ociDigestRe().MatchString(p.Digest) {
			return fmt.Errorf("invalid image digest %s", quote(p.Digest))
		}
		if p.Version != "" || p.Requested != "" || p.Integrity != "" || len(p.Files) > 0 {
			return errors.New("an oci pin holds only a name and a digest")
		}
		return nil
	default:
		return fmt.Errorf("unknown ecosystem %s", quote(string(p.Ecosystem)))
	}
	if p.Ecosystem == NPM {
		if !integrityRe().MatchString(p.Integrity) {
			return fmt.Errorf("invalid npm integrity %s", quote(p.Integrity))
		}
		if len(p.Files) > 0 {
			return errors.New("an npm pin has no files")
		}
		return nil
	}
	if p.Name != NormalizePyPI(p.Name) {
		return fmt.Errorf("pypi name %s is not normalised", quote(p.Name))
	}
	if p.Integrity != "" {
		return errors.New("a pypi pin has no integrity")
	}
	if len(p.Files) == 0 || len(p.Files) > maxFiles {
		return fmt.Errorf("a pypi pin needs 1 to %d files", maxFiles)
	}
	for i, f := range p.Files {
		if !pypiFileRe().MatchString(f.Name) || !sha256Re().MatchString(f.SHA256) {
			return fmt.Errorf("invalid pypi file %s", quote(f.Name))
		}
		if i > 0 && p.Files[i-1].Name >= f.Name {
			return errors.New("pypi files are not sorted by name, or repeat one")
		}
	}
	return nil
}

// validRequested reports whether tag may be recorded as what a config
// asked for: a tag (npm) or "latest".
func validRequested(e Ecosystem, tag string) bool {
	if e == NPM {
		return isNPMTag(tag)
	}
	return tag == "latest"
}

// String is a short description for people: "npm @acme/x@1.2.3",
// "oci ghcr.io/acme/x@sha256:...".
func (p *Package) String() string {
	if p.Ecosystem == OCI {
		return "oci " + p.Name + "@" + p.Digest
	}
	return string(p.Ecosystem) + " " + p.Name + "@" + p.Version
}

// quote shows a string from a config or a registry in an error: quoted
// with every control character escaped, and cut at 80 bytes.
func quote(s string) string {
	const max = 80 // why: enough to recognise the value, too short to carry a message
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}
