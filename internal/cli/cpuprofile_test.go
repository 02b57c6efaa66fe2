package cli

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCPUProfileOffByDefault(t *testing.T) {
	stop, err := startCPUProfile(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestCPUProfileWritesTheNamedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := startCPUProfile(func(k string) string {
		if k == cpuProfileEnv {
			return path
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() == 0 {
		t.Error("profile file is empty")
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("profile mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestCPUProfileUnwritableFileFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "cpu.pprof")
	if _, err := startCPUProfile(func(string) string { return path }); err == nil {
		t.Fatal("no error for a profile file in a missing folder")
	}
}

// TestCPUProfileNeverOverwrites: a path that exists (a file, a symlink)
// is refused and left as it was.
func TestCPUProfileNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{victim, link} {
		if _, err := startCPUProfile(func(string) string { return path }); err == nil {
			t.Errorf("%s: no error for an existing path", filepath.Base(path))
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the existing file was changed: %q", b)
	}
}

func TestMemProfileWritesTheNamedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mem.pprof")
	stop, err := startMemProfile(func(k string) string {
		if k == memProfileEnv {
			return path
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("profile: %d bytes, mode %v; want some bytes, mode 0600", fi.Size(), fi.Mode().Perm())
	}
	if _, err := startMemProfile(func(string) string { return path }); err == nil {
		t.Error("an existing profile file was not refused")
	}
}

// TestProfilesNotInTheHome: neither profile variable may plant a file in
// mcpseal's home (its policy.json) for later runs to trip on.
func TestProfilesNotInTheHome(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "policy.json")
	getenv := func(k string) string {
		switch k {
		case "MCPSEAL_HOME":
			return home
		case cpuProfileEnv, memProfileEnv:
			return path
		}
		return ""
	}
	if _, err := startCPUProfile(getenv); err == nil {
		t.Error("a CPU profile in the home was not refused")
	}
	if _, err := startMemProfile(getenv); err == nil {
		t.Error("a heap profile in the home was not refused")
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a policy.json was planted in the home")
	}
}

// TestSwitchHomesKeepTheUsersOwn: an env block that sets MCPSEAL_HOME (or
// HOME) beside a switch cannot move the home the switch is kept out of:
// the user's default home is always among them.
func TestSwitchHomesKeepTheUsersOwn(t *testing.T) {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	decoy := t.TempDir()
	homes := switchHomes(func(k string) string {
		switch k {
		case "MCPSEAL_HOME":
			return decoy
		case "HOME":
			return decoy
		}
		return ""
	})
	want := filepath.Join(u.HomeDir, ".mcpseal")
	if !slices.Contains(homes, want) || !slices.Contains(homes, decoy) {
		t.Errorf("homes %q, want both %s and the decoy %s", homes, want, decoy)
	}
}

// TestSwitchErrorQuotesThePath: a path an env block chose is never
// printed raw, so a newline in it cannot start a line of its own.
func TestSwitchErrorQuotesThePath(t *testing.T) {
	err := &os.PathError{Op: "write", Path: "/tmp/x\nmcpseal: pinned", Err: errors.New("no space left on device")}
	got := switchError(memProfileEnv, err)
	if strings.Contains(got, "\n") || !strings.Contains(got, `"/tmp/x\nmcpseal: pinned"`) {
		t.Errorf("switchError = %q", got)
	}
}
