package cli

import (
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
