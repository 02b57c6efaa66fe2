package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildStampedWins(t *testing.T) {
	t.Parallel()
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/mcpseal/mcpseal"},
		Deps:      []*debug.Module{{Path: "golang.org/x/mod", Version: "v0.43.0", Sum: "h1:x", Replace: &debug.Module{Path: "../mod", Version: ""}}},
		Settings:  []debug.BuildSetting{{Key: "vcs.revision", Value: "toolchain"}, {Key: "vcs.modified", Value: "true"}},
	}
	in := build("0.3.0", "abc", bi)
	if in.Version != "0.3.0" || in.Commit != "abc" || !in.Modified || len(in.Modules) != 1 || in.Modules[0].Replace == nil {
		t.Fatalf("build = %+v", in)
	}
	if s := in.Short(); !strings.HasPrefix(s, "mcpseal 0.3.0 (commit abc with uncommitted changes, go1.26.8, ") {
		t.Errorf("Short = %q", s)
	}
	if in := build("", "", bi); in.Version != "devel" || in.Commit != "toolchain" {
		t.Errorf("unstamped = %+v", in)
	}
	if in := build("", "", nil); in.Version != "devel" || in.Modules == nil {
		t.Errorf("no build info = %+v", in)
	}
}
