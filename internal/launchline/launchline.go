// Package launchline recognises the launch lines of a client's config
// that start mcpseal, in the two forms users write:
//
//	/usr/local/bin/mcpseal run --name memory -- npx -y @modelcontextprotocol/server-memory
//	npx -y mcpseal@0.3.0 run --name memory -- npx -y @modelcontextprotocol/server-memory
//
// Split returns mcpseal's own arguments ("run", "--name", …) from either
// form, so that wrap, unwrap, status, policy and the lock read both the
// same way. The npx form is accepted only in its plain shape: npx's -y or
// --yes, then mcpseal@VERSION with VERSION an exact release version. A
// line that names mcpseal through npx in any other shape (mcpseal@latest,
// no version, a range, npx options such as --package or --registry before
// it) is recognised as mcpseal but refused (Line.Err): npx would run
// whatever the registry serves, or something this package cannot read,
// and a guard whose code can change under it is not counted as one.
//
// It imports only the standard library and does no I/O.
package launchline

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Line is an mcpseal launch line split from its launcher.
type Line struct {
	// Offset is the index in the entry's args where mcpseal's own
	// arguments begin: 0 for the binary, after the package spec for npx.
	Offset int
	// NPX is the pinned version of an npx launch ("0.3.0"), "" for the
	// binary.
	NPX string
	// Err says why an npx launch of mcpseal is refused; nil otherwise.
	Err error
}

// base is the lowercased final element of a command, with either slash.
func base(command string) string {
	if i := strings.LastIndexAny(command, `/\`); i >= 0 {
		command = command[i+1:]
	}
	return strings.ToLower(command)
}

// IsBinary reports whether command names an mcpseal binary: self, or any
// file whose base name is mcpseal (or mcpseal.exe).
func IsBinary(command, self string) bool {
	if command == "" {
		return false
	}
	if self != "" && filepath.Clean(command) == filepath.Clean(self) {
		return true
	}
	b := base(command)
	return b == "mcpseal" || b == "mcpseal.exe"
}

// IsNPX reports whether command is npx (npx.cmd on Windows).
func IsNPX(command string) bool {
	switch base(command) {
	case "npx", "npx.cmd", "npx.exe":
		return true
	}
	return false
}

var release = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]{1,32})?$`)
})

// ValidVersion reports whether v is an exact release version ("0.3.0").
func ValidVersion(v string) bool { return release().MatchString(v) }

// Spec is the npx package spec of an mcpseal version: "mcpseal@0.3.0".
func Spec(version string) string { return "mcpseal@" + version }

// NPXArgs is the npx launch of mcpseal version with its arguments:
// ["-y", "mcpseal@0.3.0", args...], for a command "npx".
func NPXArgs(version string, args ...string) []string {
	return append([]string{"-y", Spec(version)}, args...)
}

var (
	errUnpinned = errors.New("npx runs mcpseal without an exact version (write npx -y mcpseal@X.Y.Z): the registry decides what runs")
	errShape    = errors.New("npx launches mcpseal with options this mcpseal does not read (write npx -y mcpseal@X.Y.Z run ...)")
)

// Split reports whether command and args start mcpseal, and where its
// own arguments begin.
func Split(command string, args []string, self string) (Line, bool) {
	if IsBinary(command, self) {
		return Line{}, true
	}
	if !IsNPX(command) {
		return Line{}, false
	}
	other := false
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		switch args[i] {
		case "-y", "--yes":
		default:
			other = true
		}
	}
	if i == len(args) {
		return Line{}, false
	}
	spec := args[i]
	v, hasVersion := strings.CutPrefix(spec, "mcpseal@")
	if spec != "mcpseal" && !hasVersion {
		return Line{}, false
	}
	if !hasVersion {
		v = ""
	}
	l := Line{Offset: i + 1, NPX: v}
	switch {
	case other:
		l.Err = errShape
	case !hasVersion || !ValidVersion(v):
		l.Err = errUnpinned
	}
	return l, true
}
