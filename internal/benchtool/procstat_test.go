package main

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		name, line   string
		utime, stime uint64
		ok           bool
	}{
		{"plain", "1234 (mcpseal) S 1 1234 1234 0 -1 4194304 900 0 0 0 37 12 5 6 20 0 8 0 100 1000000 2000 18446744073709551615", 37, 12, true},
		// A command name may hold spaces and parentheses: count from the last ')'.
		{"hostile name", "99 (a) b (c) S 1 99 99 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5", 7, 3, true},
		{"children not counted", "5 (x) S 1 5 5 0 -1 0 0 0 0 0 1 2 400 500 20 0 1 0 5", 1, 2, true},
		{"no name", "5 x S 1", 0, 0, false},
		{"too short", "5 (x) S 1 5 5 0 -1 0 0 0 0 0 1", 0, 0, false},
		{"not a number", "5 (x) S 1 5 5 0 -1 0 0 0 0 0 1x 2 0 0", 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, s, err := parseStat([]byte(c.line))
			if (err == nil) != c.ok {
				t.Fatalf("err = %v, want ok %v", err, c.ok)
			}
			if u != c.utime || s != c.stime {
				t.Errorf("utime, stime = %d, %d; want %d, %d", u, s, c.utime, c.stime)
			}
		})
	}
}

func TestParseVmHWM(t *testing.T) {
	status := "Name:\tmcpseal\nVmPeak:\t  1262040 kB\nVmHWM:\t   19712 kB\nVmRSS:\t   18000 kB\n"
	if n, err := parseVmHWM([]byte(status)); err != nil || n != 19712 {
		t.Errorf("parseVmHWM = %d, %v; want 19712", n, err)
	}
	for _, bad := range []string{"Name:\tx\n", "VmHWM:\t12 MB\n", "VmHWM:\t-1 kB\n", "VmHWM:\tx kB\n"} {
		if _, err := parseVmHWM([]byte(bad)); err == nil {
			t.Errorf("parseVmHWM(%q) did not fail", bad)
		}
	}
}

func TestParseSchedstat(t *testing.T) {
	if n, ok := parseSchedstat([]byte("148519 265599 2\n")); !ok || n != 148519 {
		t.Errorf("parseSchedstat = %d, %v", n, ok)
	}
	if _, ok := parseSchedstat([]byte("1 2\n")); ok {
		t.Error("parseSchedstat accepted two fields")
	}
}

// TestReadOwnProcess reads this process's figures the way the benchmark
// reads a proxy's.
func TestReadOwnProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	c, err := readCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if c.schedNS == 0 {
		t.Error("no schedstat time for a running process")
	}
	if kib, err := peakRSSKiB(os.Getpid()); err != nil || kib <= 0 {
		t.Errorf("peakRSSKiB = %d, %v", kib, err)
	}
}

func TestSumFields(t *testing.T) {
	t.Parallel()
	io := "rchar: 10\nwchar: 20\nsyscr: 7\nsyscw: 5\nread_bytes: 0\n"
	if n := sumFields([]byte(io), "syscr", "syscw"); n != 12 {
		t.Errorf("syscr+syscw = %d, want 12", n)
	}
	status := "Name:\tx\nvoluntary_ctxt_switches:\t3\nnonvoluntary_ctxt_switches:\t4\n"
	if n := sumFields([]byte(status), "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"); n != 7 {
		t.Errorf("switches = %d, want 7", n)
	}
	if n := sumFields([]byte("syscr: x\n"), "syscr"); n != 0 {
		t.Errorf("unreadable value = %d, want 0", n)
	}
}

func TestReadSyscallsOfThisProcess(t *testing.T) {
	t.Parallel()
	if readSyscalls(os.Getpid()) == 0 || readSwitches(os.Getpid()) == 0 {
		t.Error("no system calls or context switches read for a running process")
	}
}
