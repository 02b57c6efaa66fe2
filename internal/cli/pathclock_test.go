package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/internal/pathclock"
)

// TestRunWritesItsPathClock: `mcpseal run` with MCPSEAL_PATHCLOCK writes
// its report when the session ends, and refuses to start over a file that
// exists rather than run unclocked or overwrite it.
func TestRunWritesItsPathClock(t *testing.T) {
	t.Setenv("MCPSEAL_HOME", t.TempDir())
	path := filepath.Join(t.TempDir(), "run.clock.json")
	t.Setenv(pathclock.Env, path)
	if code, _, errOut := runCLI(t, "run", "--", "sh", "-c", "cat >/dev/null"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := pathclock.Read(path); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "run", "--", "sh", "-c", "cat >/dev/null")
	if code == ExitOK || out != "" || !strings.Contains(errOut, pathclock.Env) {
		t.Errorf("over an existing report: exit %d, stdout %q, stderr %q; want a refusal naming %s", code, out, errOut, pathclock.Env)
	}
}

// TestRunPathClockNotInTheHome: a config's env block that names a file in
// mcpseal's home (its policy.json) is refused before the server starts,
// and nothing is planted there for later runs to trip on.
func TestRunPathClockNotInTheHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("MCPSEAL_HOME", home)
	marker := filepath.Join(t.TempDir(), "started")
	t.Setenv(pathclock.Env, filepath.Join(home, "policy.json"))
	code, out, errOut := runCLI(t, "run", "--", "sh", "-c", "touch "+marker+"; cat >/dev/null")
	if code == ExitOK || out != "" || !strings.Contains(errOut, "inside mcpseal's home") {
		t.Errorf("exit %d, stdout %q, stderr %q; want a refusal", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "policy.json")); err == nil {
		t.Error("a policy.json was planted in the home")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the server was started")
	}
}

// TestRunPathClockNotInTheEnvironmentsHome: with --home elsewhere, the
// home the environment names (which other entries' runs use) is still
// kept clear, through /proc's link to the root as well.
func TestRunPathClockNotInTheEnvironmentsHome(t *testing.T) {
	envHome := t.TempDir()
	t.Setenv("MCPSEAL_HOME", envHome)
	paths := []string{filepath.Join(envHome, "policy.json")}
	if _, err := os.Stat("/proc/self/root"); err == nil {
		paths = append(paths, "/proc/self/root/.."+envHome+"/policy.json")
	}
	for _, path := range paths {
		t.Setenv(pathclock.Env, path)
		code, out, errOut := runCLI(t, "run", "--home", t.TempDir(), "--", "sh", "-c", "cat >/dev/null")
		if code == ExitOK || out != "" || !strings.Contains(errOut, "inside mcpseal's home") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a refusal", path, code, out, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(envHome, "policy.json")); err == nil {
		t.Error("a policy.json was planted in the environment's home")
	}
}

// TestRunServerDoesNotInheritThePathClock: the server is not the process
// being measured, and given the variable could write into its report (or,
// being another mcpseal, fail on it).
func TestRunServerDoesNotInheritThePathClock(t *testing.T) {
	t.Setenv("MCPSEAL_HOME", t.TempDir())
	dir := t.TempDir()
	t.Setenv(pathclock.Env, filepath.Join(dir, "run.clock.json"))
	t.Setenv("MCPSEAL_CPUPROFILE", "")
	seen := filepath.Join(dir, "seen")
	script := `printf '%s|%s' "${MCPSEAL_PATHCLOCK-unset}" "${PATH:+path}" > ` + seen + `; cat >/dev/null`
	if code, _, errOut := runCLI(t, "run", "--", "sh", "-c", script); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "unset|path" {
		t.Errorf("the server saw %q, want the clock unset and the rest of the environment", b)
	}
}

// TestClockHooksTimeWhatRuns: each hook the gate has is timed once per
// call and still decides; hooks it lacks stay absent.
func TestClockHooksTimeWhatRuns(t *testing.T) {
	t.Parallel()
	c := &pathclock.Clock{}
	var events int
	h := clockHooks(gate.Hooks{
		Call: func(gate.CallInfo) gate.Verdict {
			time.Sleep(time.Millisecond)
			return gate.Verdict{Kind: gate.Refuse}
		},
		Event: func(gate.Event) { events++ },
	}, c)
	if v := h.Call(gate.CallInfo{}); v.Kind != gate.Refuse {
		t.Errorf("the timed call hook decided %v", v.Kind)
	}
	h.Event(gate.Event{})
	h.Event(gate.Event{})
	if h.Result != nil {
		t.Error("a result hook appeared")
	}
	r := c.Report()
	if r.Call.Count != 1 || r.Call.NS < int64(time.Millisecond) || r.Event.Count != 2 || events != 2 || r.Result.Count != 0 {
		t.Errorf("report %+v, %d events passed on", r, events)
	}
	if same := clockHooks(gate.Hooks{}, nil); same.Call != nil || same.Event != nil {
		t.Error("hooks changed without a clock")
	}
}
