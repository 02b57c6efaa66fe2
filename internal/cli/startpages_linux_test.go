package cli

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestExeMappingsTakesOnlyCleanReadOnlyMappingsOfTheFile: what
// dropStartPages would drop, from an smaps text.
func TestExeMappingsTakesOnlyCleanReadOnlyMappingsOfTheFile(t *testing.T) {
	t.Parallel()
	smaps := `00400000-00a00000 r-xp 00000000 fd:01 77  /usr/bin/mcpseal
Size:               6144 kB
Anonymous:             0 kB
Swap:                  0 kB
VmFlags: rd ex mr mw me
00a00000-00c00000 r--p 00600000 fd:01 77  /usr/bin/mcpseal
Anonymous:             4 kB
Swap:                  0 kB
00c00000-00d00000 rw-p 00800000 fd:01 77  /usr/bin/mcpseal
Anonymous:             0 kB
Swap:                  0 kB
00d00000-00e00000 r--p 00900000 fd:01 78  /usr/bin/other
Anonymous:             0 kB
Swap:                  0 kB
00e00000-00f00000 r--p 00900000 fd:02 77  /other/device
Anonymous:             0 kB
Swap:                  0 kB
00f00000-01000000 r--s 00900000 fd:01 77  /usr/bin/mcpseal
Anonymous:             0 kB
Swap:                  0 kB
01000000-01100000 r--p 00a00000 fd:01 77  /usr/bin/mcpseal
Size:               1024 kB
Swap:                  0 kB
01100000-01200000 r--p 00b00000 fd:01 77  /usr/bin/mcpseal
Anonymous:             0 kB
Anonymous:             0 kB
Swap:                  0 kB
01200000-01300000 r--p 00c00000 fd:01 77  /usr/bin/mcpseal
Anonymous:             x kB
Swap:                  0 kB
01300000-01400000 r--p 00d00000 fd:01 77  /usr/bin/mcpseal (deleted)
Anonymous:             0 kB
Swap:                  0 kB
01400000-01500000 r--p 00e00000 fd:01 77  /usr/bin/mcpseal
Anonymous:             0 kB
01500000-01600000 r--p 00f00000 fd:01 77  /usr/bin/mcpseal
Anonymous:             0 kB
Swap:                  4 kB
01600000-01700000 r--p 00f00000 fd:01 77  /usr/bin/mcpseal
Anonymous:             0 kB
Swap:                  0 kB
Swap:                  0 kB
01700000-01800000 r--p 01f00000 fd:01 77  /usr/bin/mcpseal
Anonymous:             0 kB
Swap:                  0 kB
01800000-01900000 r--p 02080000 fd:01 77  /usr/bin/mcpseal
Anonymous:             0 kB
Swap:                  0 kB
7f0000000000-7f0000001000 rw-p 00000000 00:00 0
Anonymous:             4 kB
Swap:                  0 kB
`
	// The file spans never written: all of it but 0x1f00000-0x2000000
	// (say, a writable segment) and past 0x2100000.
	ro := []fileRange{{0, 0x1f00000}, {0x2000000, 0x2100000}}
	got := exeMappings(strings.NewReader(smaps), unix.Mkdev(0xfd, 0x01), 77, ro)
	want := []mapping{{0x400000, 0xa00000}, {0x1300000, 0x1400000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("exeMappings = %#x, want %#x", got, want)
	}
}

// TestRTSwappedOutWrittenPageIsNotDropped (red team): smaps counts a
// private mapping's written (copy-on-write) pages under Anonymous only
// while they are in memory; swapped out, they are counted under Swap.
// MADV_DONTNEED would then free the swap entries and bring the file's
// bytes back: a RELRO page of an externally linked build lost its
// relocations that way, and the next libc call jumped to 0.
func TestRTSwappedOutWrittenPageIsNotDropped(t *testing.T) {
	t.Parallel()
	smaps := "01833000-01834000 r--p 01432000 fe:00 77  /usr/bin/mcpseal\n" +
		"Rss:                   0 kB\nAnonymous:             0 kB\nSwap:                  4 kB\nVmFlags: rd mr mw me ac\n"
	ro := []fileRange{{0, 1 << 30}}
	if got := exeMappings(strings.NewReader(smaps), unix.Mkdev(0xfe, 0), 77, ro); len(got) != 0 {
		t.Fatalf("exeMappings = %#x: a RELRO page whose written copy is in swap would be dropped", got)
	}
}

// TestRTSwappedOutWrittenPageSurvivesDropStartPages (red team), live: a
// page of this executable written, then made read-only (as the loader
// leaves RELRO) and paged out. It needs swap, which a test cannot turn on
// without changing the machine; where there is none it says so and skips.
func TestRTSwappedOutWrittenPageSurvivesDropStartPages(t *testing.T) {
	if b, err := os.ReadFile("/proc/swaps"); err != nil || bytes.Count(b, []byte("\n")) < 2 {
		t.Skip("no swap on this machine: TestRTSwappedOutWrittenPageIsNotDropped holds the rule from an smaps text")
	}
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := unix.Mmap(int(f.Fd()), 0, os.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	copy(mem, "WRITTEN!")
	if err := unix.Mprotect(mem, unix.PROT_READ); err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&mem[0])))
	swapped := false
	for i := 0; i < 50 && !swapped; i++ {
		_ = unix.Madvise(mem, unix.MADV_PAGEOUT)
		b, _ := os.ReadFile("/proc/self/smaps")
		_, rec, _ := strings.Cut(string(b), "\n"+head)
		rec, _, _ = strings.Cut(rec, "VmFlags")
		swapped = strings.Contains(rec, "\nAnonymous:             0 kB") && !strings.Contains(rec, "\nSwap:                  0 kB")
	}
	if !swapped {
		t.Skip("the kernel did not swap the page out")
	}
	dropStartPages()
	if got := string(mem[:8]); got != "WRITTEN!" {
		t.Fatalf("after dropStartPages the written page reads %q: written data lost", got)
	}
}

// TestReadOnlyRangesOfThisExecutable: the test binary (static, like a
// release build) has read-only spans, its text among them, and none of
// them meets a writable segment.
func TestReadOnlyRangesOfThisExecutable(t *testing.T) {
	t.Parallel()
	ro, err := readOnlyRanges("/proc/self/exe")
	if err != nil || len(ro) == 0 {
		t.Fatalf("readOnlyRanges = %v, %v", ro, err)
	}
	f, err := elf.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_W != 0 && p.Filesz > 0 {
			w := fileRange{p.Off, p.Off + p.Filesz}
			if overlapsAny(w, ro) {
				t.Errorf("writable segment %#x meets a read-only span of %#x", w, ro)
			}
		}
	}
}

// TestReadOnlyRangesRefusesWhatItCannotRead: a file that is not an
// executable has no spans to drop.
func TestReadOnlyRangesRefusesWhatItCannotRead(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "not-elf")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ro, err := readOnlyRanges(p); err == nil || len(ro) != 0 {
		t.Fatalf("readOnlyRanges(not an ELF file) = %v, %v", ro, err)
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
	ro, err := readOnlyRanges("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	if ms := exeMappings(f, uint64(st.Dev), st.Ino, ro); len(ms) == 0 {
		t.Fatal("no clean read-only mapping of the executable found in /proc/self/smaps")
	}
	dropStartPages()
	if got := strings.Repeat("ok", 2); got != "okok" {
		t.Fatalf("after dropStartPages: %q", got)
	}
}

// FuzzExeMappingsOnlyCleanReadOnly: whatever the text, every mapping
// exeMappings returns has a header line of its own — private, not
// writable, of the file fd:01 inode 77, its file span inside ro — and,
// before the next header, exactly one Anonymous and one Swap line, both
// 0 kB.
func FuzzExeMappingsOnlyCleanReadOnly(f *testing.F) {
	f.Add("00400000-00a00000 r-xp 00000000 fd:01 77  /usr/bin/mcpseal\nAnonymous:             0 kB\nSwap:                  0 kB\n")
	f.Add("00c00000-00d00000 rw-p 00800000 fd:01 77  Anonymous: 0 kB\nAnonymous:             4 kB\nSwap: 0 kB\n")
	f.Add("00400000-00a00000 r-xp 0 fd:01 77 /a\nAnonymous: 0 kB\nSwap: 0 kB\nSwap: 0 kB\n")
	f.Add("01800000-01900000 r--p 00f80000 fd:01 77 /a\nAnonymous: 0 kB\nSwap: 0 kB\n")
	ro := []fileRange{{0, 0x1000000}, {0x2000000, 0x2100000}}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range exeMappings(strings.NewReader(s), unix.Mkdev(0xfd, 0x01), 77, ro) {
			if !cleanRecord(s, m, ro) {
				t.Fatalf("returned %#x from %q", m, s)
			}
		}
	})
}

// cleanRecord is the rule of FuzzExeMappingsOnlyCleanReadOnly, written
// plainly.
func cleanRecord(s string, m mapping, ro []fileRange) bool {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		fs := strings.Fields(l)
		if len(fs) < 6 || fs[0] != fmt.Sprintf("%x-%x", m.start, m.end) && !sameRange(fs[0], m) {
			continue
		}
		var off uint64
		if _, err := fmt.Sscanf(fs[2], "%x", &off); err != nil {
			continue
		}
		if len(fs[1]) != 4 || fs[1][1] == 'w' || fs[1][3] != 'p' || (fs[3] != "fd:01" && !sameDev(fs[3])) || fs[4] != "77" && fs[4] != "077" {
			continue
		}
		if !within(fileRange{off, off + uint64(m.end-m.start)}, ro) {
			continue
		}
		anon, swap := 0, 0
		for _, k := range lines[i+1:] {
			if kk, _, ok := strings.Cut(k, ":"); !ok || strings.ContainsAny(kk, " -") || kk == "" {
				break // the next header
			}
			// The value as smaps spells it, "0 kB"; the parser reads "0kB",
			// "+0" and " 00 " as 0 too (red team), and so does the rule.
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.SplitN(k, ":", 2)[1]), "kB")))
			zero := err == nil && n == 0
			switch {
			case strings.HasPrefix(k, "Anonymous:") && zero:
				anon++
			case strings.HasPrefix(k, "Anonymous:"):
				anon += 2
			case strings.HasPrefix(k, "Swap:") && zero:
				swap++
			case strings.HasPrefix(k, "Swap:"):
				swap += 2
			}
		}
		if anon == 1 && swap == 1 {
			return true
		}
	}
	return false
}

// sameRange and sameDev accept the spellings strconv.ParseUint reads as
// the same numbers (leading zeros, upper case).
func sameRange(f string, m mapping) bool {
	var lo, hi uint64
	n, err := fmt.Sscanf(f, "%x-%x", &lo, &hi)
	return err == nil && n == 2 && uintptr(lo) == m.start && uintptr(hi) == m.end
}

func sameDev(f string) bool {
	var a, b uint64
	n, err := fmt.Sscanf(f, "%x:%x", &a, &b)
	return err == nil && n == 2 && a == 0xfd && b == 1
}
