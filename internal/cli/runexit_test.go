package cli

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/stdio"
)

func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	closed := func(code int) gate.Status { return gate.Status{Closed: true, Code: code} }
	for _, tc := range []struct {
		name string
		res  stdio.Result
		want int
	}{
		{"client closed", stdio.Result{}, ExitOK},
		{"blocked", stdio.Result{Gate: closed(gate.CodeBlocked)}, ExitBlocked},
		{"held", stdio.Result{Gate: closed(gate.CodeHeld)}, ExitHeld},
		{"server exited", stdio.Result{ServerExited: true, Gate: closed(gate.CodeServerExited)}, ExitServer},
		{"unverified", stdio.Result{Gate: closed(gate.CodeUnverified)}, ExitVerify},
		{"preflight", stdio.Result{Gate: closed(codePreflight)}, ExitRefused},
		{"gate step panicked", stdio.Result{Failed: true, Gate: closed(gate.CodeInternal)}, ExitFailed},
		{"panicked, even Fail", stdio.Result{Failed: true}, ExitFailed},
		// A drift found before the failure stays the finding that matters.
		{"blocked, then panicked", stdio.Result{Failed: true, Gate: closed(gate.CodeBlocked)}, ExitBlocked},
	} {
		if got := runExitCode(tc.res); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestRunServerThatCannotStart: run starts the server itself now (so that
// the gate's set-up overlaps the server's start); a command that cannot
// start still exits ExitServer with stdio's error and nothing on stdout.
func TestRunServerThatCannotStart(t *testing.T) {
	t.Setenv("MCPSEAL_HOME", t.TempDir())
	missing := filepath.Join(t.TempDir(), "srv")
	code, out, errOut := runCLI(t, "run", "--", missing)
	want := fmt.Sprintf("mcpseal: error: cannot find server command %q: stat %s: no such file or directory\n", missing, missing)
	if code != ExitServer || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want %d, nothing, %q", code, out, errOut, ExitServer, want)
	}
}
