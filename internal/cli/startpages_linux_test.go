package cli

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestExeMappingsTakesOnlyCleanReadOnlyMappingsOfTheFile: what
// dropStartPages would drop, from an smaps text.
func TestExeMappingsTakesOnlyCleanReadOnlyMappingsOfTheFile(t *testing.T) {
	t.Parallel()
	smaps := `00400000-00a00000 r-xp 00000000 fd:01 77  /usr/bin/mcpseal
Size:               6144 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
00a00000-00c00000 r--p 00600000 fd:01 77  /usr/bin/mcpseal
Anonymous:             4 kB
00c00000-00d00000 rw-p 00800000 fd:01 77  /usr/bin/mcpseal
Anonymous:             0 kB
00d00000-00e00000 r--p 00900000 fd:01 78  /usr/bin/other
Anonymous:             0 kB
00e00000-00f00000 r--p 00900000 fd:02 77  /other/device
Anonymous:             0 kB
00f00000-01000000 r--s 00900000 fd:01 77  /usr/bin/mcpseal
Anonymous:             0 kB
01000000-01100000 r--p 00a00000 fd:01 77  /usr/bin/mcpseal
Size:               1024 kB
01100000-01200000 r--p 00b00000 fd:01 77  /usr/bin/mcpseal
Anonymous:             0 kB
Anonymous:             0 kB
01200000-01300000 r--p 00c00000 fd:01 77  /usr/bin/mcpseal
Anonymous:             x kB
01300000-01400000 r--p 00d00000 fd:01 77  /usr/bin/mcpseal (deleted)
Anonymous:             0 kB
7f0000000000-7f0000001000 rw-p 00000000 00:00 0
Anonymous:             4 kB
`
	got := exeMappings(strings.NewReader(smaps), unix.Mkdev(0xfd, 0x01), 77)
	want := []mapping{{0x400000, 0xa00000}, {0x1300000, 0x1400000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("exeMappings = %#x, want %#x", got, want)
	}
}

// TestDropStartPagesOnThisProcess: the test binary's own text is a
// mapping dropStartPages finds, and the process runs on after it drops it.
func TestDropStartPagesOnThisProcess(t *testing.T) {
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ms := exeMappings(f, uint64(st.Dev), st.Ino); len(ms) == 0 {
		t.Fatal("no clean read-only mapping of the executable found in /proc/self/smaps")
	}
	dropStartPages()
	if got := strings.Repeat("ok", 2); got != "okok" {
		t.Fatalf("after dropStartPages: %q", got)
	}
}
