//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRedTeamRefusedServerIsNeverStarted: run now starts the server
// itself, before the gate is built; every refusal decided before that
// point must still keep the server from running at all: a host policy
// that blocks it (before_connect), a policy that does not load, a
// required audit log that cannot be opened, a team lock that cannot be
// read.
func TestRedTeamRefusedServerIsNeverStarted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy string
		setup  func(t *testing.T, home string)
		flags  []string
		code   int
	}{
		{name: "control", code: -1},
		{name: "before_connect", policy: `{"version":1,"servers":{"srv":{"connect":"block"}}}`, code: -1},
		{name: "bad policy", policy: `{"version":1,"servers":{"srv":{"connect":"sometimes"}}}`, code: ExitRefused},
		{name: "required audit", policy: `{"version":1,"audit":{"required":true}}`, code: ExitRefused,
			setup: func(t *testing.T, home string) {
				if err := os.WriteFile(filepath.Join(home, "audit"), []byte("not a folder"), 0o600); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "unreadable lock", flags: []string{"--lock", "/nonexistent/mcpseal.lock"}, code: ExitRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("MCPSEAL_HOME", home)
			if tc.policy != "" {
				if err := os.WriteFile(filepath.Join(home, "policy.json"), []byte(tc.policy), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.setup != nil {
				tc.setup(t, home)
			}
			marker := filepath.Join(t.TempDir(), "started")
			args := append([]string{"run", "--name", "srv"}, tc.flags...)
			args = append(args, "--", "/bin/sh", "-c", `: > "$0"`, marker)
			code, out, errOut := runCLI(t, args...)
			if tc.name == "control" {
				if _, err := os.Stat(marker); err != nil {
					t.Fatalf("the server did not run unrefused (exit %d, stderr %q): the test sees nothing", code, errOut)
				}
				return
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("the server ran (exit %d, stderr %q)", code, errOut)
			}
			if tc.code >= 0 && code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q", out)
			}
		})
	}
}
