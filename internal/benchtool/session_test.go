package main

import (
	"slices"
	"testing"
)

func TestLaunchWrapped(t *testing.T) {
	argv := []string{"mcpseal", "run", "--name", "bench", "--", "server"}
	for _, tc := range []struct {
		name                  string
		l                     launch
		cmd                   []string
		profile, stderrOutput string
	}{
		{"plain", launch{}, argv, "", ""},
		{"profiled", launch{profile: "/p/s-1.pprof"}, argv, "/p/s-1.pprof", ""},
		{"wrap without a profile is the pinning session: not wrapped", launch{wrap: []string{"valgrind"}}, argv, "", ""},
		{"wrapped", launch{profile: "/p/s-1.pprof", wrap: []string{"valgrind", "--out=%N.out"}},
			append([]string{"valgrind", "--out=/p/s-1.out"}, argv...), "", "/p/s-1.stderr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, profile, stderr := tc.l.wrapped(argv)
			if !slices.Equal(cmd, tc.cmd) || profile != tc.profile || stderr != tc.stderrOutput {
				t.Errorf("wrapped = %q, %q, %q; want %q, %q, %q", cmd, profile, stderr, tc.cmd, tc.profile, tc.stderrOutput)
			}
		})
	}
}
