package cli

import (
	"strings"
	"testing"
)

// TestStateMustBeADatabaseURL: a --state or MCPSEAL_STATE that is not a
// postgres:// URL is refused, never read as "use the files"; a URL with a
// password is refused without echoing it.
func TestStateMustBeADatabaseURL(t *testing.T) {
	pinHome(t)
	for _, args := range [][]string{
		{"list", "--state", "/var/lib/mcpseal"},
		{"approve", "x", "--yes", "--state", "mysql://db/x"},
		{"audit", "verify", "--state", "db.internal"},
		{"state", "migrate", "--state", "sqlite:state.db"},
	} {
		runPins(t, "", args...).want(t, ExitUsage, nil, []string{"--state must be a postgres:// URL"})
	}
	t.Setenv(stateEnv, "/srv/state")
	runPins(t, "", "verify").want(t, ExitUsage, nil, []string{"--state must be a postgres:// URL", "unset MCPSEAL_STATE"})
	t.Setenv(stateEnv, "")
	r := runPins(t, "", "list", "--state", "postgres://mcpseal:hunter2@127.0.0.1:1/db")
	r.want(t, 1, nil, []string{"carries a password", "PGPASSWORD"})
	if strings.Contains(r.stderr, "hunter2") {
		t.Fatalf("the password was echoed: %s", r.stderr)
	}
	runPins(t, "", "state", "migrate").want(t, ExitUsage, nil, []string{"state migrate needs --state"})
}
