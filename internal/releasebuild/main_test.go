package releasebuild

import (
	"bytes"
	"strings"
	"testing"
)

// TestMainRefusesBeforeBuilding: a bad version, target or missing key is
// refused before anything is compiled or read from git.
func TestMainRefusesBeforeBuilding(t *testing.T) {
	t.Setenv(KeyEnv, "")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: scripts/release"},
		{[]string{"v0.3.0"}, 1, "not a plain semver version"},
		{[]string{"--targets", "linux/386", "0.3.0"}, 1, "unknown target"},
		{[]string{"0.3.0"}, 1, "no signing key"},
		{[]string{"--bogus", "0.3.0"}, 2, "flag provided but not defined"},
	} {
		var stderr bytes.Buffer
		if code := Main(c.args, &stderr); code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("release %v: exit %d, %q; want exit %d with %q", c.args, code, stderr.String(), c.code, c.want)
		}
	}
}
