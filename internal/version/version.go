// Package version says which mcpseal this is: the release version and
// commit that scripts/release stamps in with -ldflags -X, and the module
// versions the Go toolchain records in every binary (debug.ReadBuildInfo).
//
// A binary built by scripts/release 0.3.0 reports
//
//	mcpseal 0.3.0 (commit 4ccc6c3…, go1.26.8, linux/amd64)
//
// and one built with a plain `go build` reports version "devel" and the
// commit the toolchain stamped (vcs.revision), when it stamped one.
package version

import (
	"runtime"
	"runtime/debug"
)

// Stamped by scripts/release:
//
//	-ldflags "-X github.com/mcpseal/mcpseal/internal/version.version=0.3.0
//	          -X github.com/mcpseal/mcpseal/internal/version.commit=<40 hex>"
//
// and the release public key it pins for verify-release (the base64 blob
// of an ssh-ed25519 key, no spaces, so that -X carries it unquoted):
//
//	-X github.com/mcpseal/mcpseal/internal/version.releaseKey=AAAAC3NzaC1lZDI1NTE5…
//
// They are unexported so that nothing but the linker sets them.
var (
	version    string
	commit     string
	releaseKey string
)

// ReleaseKey returns the release public key this binary pins, as an
// authorized_keys line ("ssh-ed25519 AAAA…"), or "" when it pins none (a
// build scripts/release did not make).
func ReleaseKey() string {
	if releaseKey == "" {
		return ""
	}
	return "ssh-ed25519 " + releaseKey
}

// Module is one module compiled into the binary.
type Module struct {
	Path    string `json:"path"`
	Version string `json:"version"`
	// Sum is the go.sum hash ("h1:…"), when the toolchain recorded one.
	Sum string `json:"sum,omitempty"`
	// Replace is the module that replaced this one, if any.
	Replace *Module `json:"replace,omitempty"`
}

// Info is what `mcpseal version` prints.
type Info struct {
	// Version is the release version ("0.3.0"), or "devel" for a build
	// scripts/release did not stamp.
	Version string `json:"mcpseal"`
	// Commit is the source commit, "" when nobody recorded it.
	Commit string `json:"commit,omitempty"`
	// Modified is true when the toolchain recorded uncommitted changes.
	Modified  bool     `json:"modified,omitempty"`
	GoVersion string   `json:"go"`
	OS        string   `json:"os"`
	Arch      string   `json:"arch"`
	Main      string   `json:"main,omitempty"`
	Modules   []Module `json:"modules"`
}

// Get returns this binary's version information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return build(version, commit, bi)
}

// build composes Info from the stamped values and the build info (nil
// when the binary carries none).
func build(v, c string, bi *debug.BuildInfo) Info {
	in := Info{Version: v, Commit: c, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, Modules: []Module{}}
	if in.Version == "" {
		in.Version = "devel"
	}
	if bi == nil {
		return in
	}
	in.Main = bi.Main.Path
	if bi.GoVersion != "" {
		in.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if in.Commit == "" {
				in.Commit = s.Value
			}
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		in.Modules = append(in.Modules, module(d))
	}
	return in
}

func module(d *debug.Module) Module {
	m := Module{Path: d.Path, Version: d.Version, Sum: d.Sum}
	if d.Replace != nil {
		r := module(d.Replace)
		m.Replace = &r
	}
	return m
}

// Short is the one-line form: "mcpseal 0.3.0 (commit abc…, go1.26.8, linux/amd64)".
func (in Info) Short() string {
	s := "mcpseal " + in.Version + " ("
	if in.Commit != "" {
		s += "commit " + in.Commit
		if in.Modified {
			s += " with uncommitted changes"
		}
		s += ", "
	}
	return s + in.GoVersion + ", " + in.OS + "/" + in.Arch + ")"
}
