//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/testmcp"
)

// Exit statuses this file needs besides main_test.go's
// (docs/error-codes.md): a held run, a failed check.
const (
	exitHeld    = 4
	exitFailure = 1
)

// TestFIFOInPlaceOfEventsLogHoldsTheSession: a FIFO planted at
// pins/events.jsonl (or at the store's lock file) used to make every later
// session block in open(2), holding the store's lock, with the client
// waiting forever. The session must instead be held at once: the client
// gets -32002 within seconds, and 'mcpseal verify' names the file.
func TestFIFOInPlaceOfEventsLogHoldsTheSession(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"events.jsonl", ".lock"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			sc := w.scenario(testmcp.Scenario{Contract: testmcp.Contract{Tools: []testmcp.RawJSON{honestEcho}}})
			run := []string{"--name", "fifo"}
			honestSession(t, startScenario(t, w.home, run, sc), 1)

			path := filepath.Join(w.home, "pins", name)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatalf("mkfifo: %v", err)
			}
			p := startScenario(t, w.home, run, sc)
			start := time.Now()
			done := make(chan error, 1)
			go func() { _, err := p.Initialize(legacyVersion, nil); done <- err }()
			select {
			case err := <-done:
				wantRPCError(t, err, codeHeld)
			case <-time.After(5 * time.Second):
				t.Fatalf("no answer after %v: mcpseal blocked on the FIFO\n%s", time.Since(start).Round(time.Millisecond), p.Stderr())
			}
			wantExit(t, "held session", p.Close(), exitHeld)
			if n := w.count(2, "tools/call"); n != 0 {
				t.Errorf("%d tools/call reached the server in the held session", n)
			}

			stdout, stderr, code := mcpseal(t, w.home, "verify")
			if code != exitFailure || !strings.Contains(stdout+stderr, name+" is a named pipe") {
				t.Errorf("verify: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}

// TestLinkedPinsFolderHoldsTheSession: a link in place of the pins folder
// (pointing at a copy an attacker controls) holds the session with -32002
// for the client, rather than a process that exits without a word.
func TestLinkedPinsFolderHoldsTheSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sc := w.scenario(testmcp.Scenario{Contract: testmcp.Contract{Tools: []testmcp.RawJSON{honestEcho}}})
	run := []string{"--name", "linked"}
	honestSession(t, startScenario(t, w.home, run, sc), 1)
	pins := filepath.Join(w.home, "pins")
	if err := os.Rename(pins, pins+".elsewhere"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pins+".elsewhere", pins); err != nil {
		t.Fatal(err)
	}
	p := startScenario(t, w.home, run, sc)
	_, err := p.Initialize(legacyVersion, nil)
	wantRPCError(t, err, codeHeld)
	wantExit(t, "held session", p.Close(), exitHeld)
	if n := w.count(2, "tools/call"); n != 0 {
		t.Errorf("%d tools/call reached the server in the held session", n)
	}
}
