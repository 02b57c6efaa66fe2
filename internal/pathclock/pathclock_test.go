package pathclock

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestOffUnlessNamed(t *testing.T) {
	c, write, err := Open(func(string) string { return "" }, "")
	if err != nil || c != nil {
		t.Fatalf("unset: clock %v, err %v; want none", c, err)
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
}

// TestReportRoundTrips: what a clock gathers is what Read gives back,
// from a file created 0600.
func TestReportRoundTrips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clock.json")
	c, write, err := Open(func(k string) string {
		if k == Env {
			return path
		}
		return ""
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		m := Now()
		busy(200 * time.Microsecond)
		m = c.FromClient.Gated(m)
		time.Sleep(100 * time.Microsecond)
		c.FromClient.Written(m)
	}
	c.FromServer.Written(c.FromServer.Gated(Now()))
	c.Call.Since(time.Now().Add(-time.Millisecond))
	c.Event.Since(time.Now())
	c.Event.Since(time.Now())
	if err := write(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("report file: %v, %v; want mode 0600", fi, err)
	}
	r, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.FromClient.Frames != 3 || r.FromServer.Frames != 1 || r.Call.Count != 1 || r.Result.Count != 0 || r.Event.Count != 2 {
		t.Errorf("counts %+v", r)
	}
	if r.FromClient.GateNS < int64(3*200*time.Microsecond) || r.FromClient.WriteNS < int64(3*100*time.Microsecond) || r.Call.NS < int64(time.Millisecond) {
		t.Errorf("times too short: %+v", r)
	}
	if r.FromClient.CPUFrames > r.FromClient.Frames {
		t.Errorf("%d frames timed on one thread of %d", r.FromClient.CPUFrames, r.FromClient.Frames)
	}
	if runtime.GOOS == "linux" && (r.FromClient.CPUFrames == 0 || r.FromClient.GateCPUNS < int64(r.FromClient.CPUFrames)*int64(100*time.Microsecond)) {
		t.Errorf("thread CPU of busy steps not counted: %+v", r.FromClient)
	}
}

// busy spins for d, so that a step uses its thread's CPU.
func busy(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// TestNeverOverwrites: an existing file (or a symlink to one) is refused,
// as MCPSEAL_CPUPROFILE's are.
func TestNeverOverwrites(t *testing.T) {
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
		if _, _, err := Open(func(string) string { return path }, ""); err == nil {
			t.Errorf("%s: no error for an existing path", filepath.Base(path))
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the existing file was changed: %q", b)
	}
}

func TestReadRefusesAnotherFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clock.json")
	if err := os.WriteFile(path, []byte(`{"format":"mcpseal-pathclock/0"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); err == nil {
		t.Error("a report of another format was read")
	}
}

// TestRefusesAFileInTheHome: a config's env block cannot plant the report
// among mcpseal's own files (its policy.json, a pin): directly, below,
// through a link to the home, or through ".." after a link, which the
// kernel walks from where the link leads (the second red team's bypass);
// nothing is left behind.
func TestRefusesAFileInTheHome(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(filepath.Join(home, "pins", "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(base, "other")
	if err := os.MkdirAll(filepath.Join(other, "a", "b"), 0o700); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"tohome": home, "tosub": filepath.Join(home, "pins", "sub"), "a/b/toroot": "/"} {
		if err := os.Symlink(to, filepath.Join(other, link)); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{
		filepath.Join(home, "policy.json"),
		filepath.Join(home, "pins", "x.json"),
		filepath.Join(other, "tohome", "policy.json"),
		filepath.Join(home, "pins", "..", "policy.json"),
		other + "/tosub/../x.json",                  // Dir() alone reads other/x.json
		other + "/tosub/../../policy.json",          // the home itself
		other + "/a/b/toroot/.." + home + "/x.json", // "/" then up: still "/"
		home + "//pins/./x.json",
	}
	if runtime.GOOS == "linux" {
		paths = append(paths, "/proc/self/root/.."+home+"/policy.json")
	}
	for _, path := range paths {
		if _, _, err := Open(func(string) string { return path }, home); err == nil || !strings.Contains(err.Error(), "inside mcpseal's home") {
			t.Errorf("%s: %v, want refused as inside the home", path, err)
		}
	}
	var left []string
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("files left in the home: %q", left)
	}
	for _, path := range []string{filepath.Join(other, "clock.json"), filepath.Join(base, "home2.json"), other + "/tohome/../other.json"} {
		if _, _, err := Open(func(string) string { return path }, home); err != nil {
			t.Errorf("%s, outside the home: %v", path, err)
		}
	}
}

// TestRefusesAFileInTheHomesPlace: the file may not be the home, or a
// folder the home is yet to be created under.
func TestRefusesAFileInTheHomesPlace(t *testing.T) {
	base := t.TempDir()
	for _, tc := range []struct{ home, path string }{
		{filepath.Join(base, "a", ".mcpseal"), filepath.Join(base, "a", ".mcpseal")},
		{filepath.Join(base, "b", "h3", "deep"), filepath.Join(base, "b", "h3")},
	} {
		if err := os.MkdirAll(filepath.Dir(tc.path), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Open(func(string) string { return tc.path }, tc.home); err == nil || !strings.Contains(err.Error(), "at or above mcpseal's home") {
			t.Errorf("%s for home %s: %v, want refused", tc.path, tc.home, err)
		}
		if _, err := os.Lstat(tc.path); err == nil {
			t.Errorf("%s was left in the home's place", tc.path)
		}
	}
}

func TestWithoutDropsTheFileSwitches(t *testing.T) {
	env := []string{"PATH=/bin", Env + "=/tmp/c.json", "MCPSEAL_CPUPROFILE=/tmp/p", "MCPSEAL_MEMPROFILE=/tmp/m", "MCPSEAL_HOME=/h", "X=MCPSEAL_PATHCLOCK=1"}
	got := Without(env)
	want := []string{"PATH=/bin", "MCPSEAL_HOME=/h", "X=MCPSEAL_PATHCLOCK=1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Without = %q, want %q", got, want)
	}
}

// TestRefusesWhatItCannotPlace: a path padded (with repeated separators)
// until the ".." the check appends passes the kernel's length limit used
// to end the walk early, as if at the root, and left the file below the
// home (the third red team's bypass); a folder whose place cannot be
// checked is now a refusal.
func TestRefusesWhatItCannotPlace(t *testing.T) {
	home := t.TempDir()
	pins := filepath.Join(home, "pins")
	if err := os.Mkdir(pins, 0o700); err != nil {
		t.Fatal(err)
	}
	path := pins + strings.Repeat("/", 4095-len(pins)-1) + "x" // 4,095 bytes: its folder and "/.." pass PATH_MAX
	if _, _, err := Open(func(string) string { return path }, home); err == nil {
		t.Error("a padded path below the home was not refused")
	}
	if _, err := os.Lstat(filepath.Join(pins, "x")); err == nil {
		t.Error("the padded path's file was left below the home")
	}
}
