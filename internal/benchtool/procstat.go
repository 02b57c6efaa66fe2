package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// userHZ is the unit of utime and stime in /proc/PID/stat: USER_HZ, which
// Linux fixes at 100 for user space whatever the kernel's own tick rate.
const userHZ = 100

// cpuReading is one reading of a process's own CPU time, children
// excluded: the figure the benchmark reports (utime+stime from
// /proc/PID/stat, in USER_HZ ticks) and the same clock at nanosecond
// resolution (the sum of sum_exec_runtime over the live threads, from
// /proc/PID/task/*/schedstat), for short runs where ticks are too coarse.
type cpuReading struct {
	ticks   uint64 // utime+stime
	schedNS uint64 // 0 when schedstat is not available
	// syscalls are the read and write system calls of the whole process
	// (syscr+syscw of /proc/PID/io), and switches its threads' context
	// switches, voluntary and not (/proc/PID/task/*/status): what a proxy
	// costs in kernel crossings and wake-ups. Both are 0 when unreadable.
	syscalls, switches uint64
}

// readCPU reads pid's CPU time.
func readCPU(pid int) (cpuReading, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return cpuReading{}, err
	}
	u, s, err := parseStat(b)
	if err != nil {
		return cpuReading{}, err
	}
	return cpuReading{ticks: u + s, schedNS: readSchedNS(pid), syscalls: readSyscalls(pid), switches: readSwitches(pid)}, nil
}

// readSyscalls is syscr+syscw of /proc/PID/io, 0 when unreadable.
func readSyscalls(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	return sumFields(b, "syscr", "syscw")
}

// readSwitches sums voluntary_ctxt_switches and nonvoluntary_ctxt_switches
// over /proc/PID/task/*/status, 0 when unreadable.
func readSwitches(pid int) uint64 {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil {
		return 0
	}
	var sum uint64
	for _, t := range tasks {
		if b, err := os.ReadFile(t); err == nil {
			sum += sumFields(b, "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")
		}
	}
	return sum
}

// sumFields adds the values of the "name: value" lines named in a proc
// file; an unreadable value counts as 0.
func sumFields(b []byte, names ...string) uint64 {
	var sum uint64
	for line := range strings.SplitSeq(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 64); err == nil {
			sum += n
		}
	}
	return sum
}

// parseStat returns utime and stime (fields 14 and 15) of a /proc/PID/stat
// line. The command name (field 2) is in parentheses and may itself hold
// spaces and parentheses, so fields are counted from the last ')'.
func parseStat(b []byte) (utime, stime uint64, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, errors.New("stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 15-3+1 {
		return 0, 0, errors.New("stat: too few fields")
	}
	if utime, err = strconv.ParseUint(f[14-3], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("stat: utime: %w", err)
	}
	if stime, err = strconv.ParseUint(f[15-3], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("stat: stime: %w", err)
	}
	return utime, stime, nil
}

// readSchedNS sums the first field of /proc/PID/task/*/schedstat (time on
// a CPU, in ns). Threads that have exited are missing from the sum; a Go
// program's threads rarely exit. 0 when unreadable.
func readSchedNS(pid int) uint64 {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil {
		return 0
	}
	var sum uint64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited between the glob and the read
		}
		if ns, ok := parseSchedstat(b); ok {
			sum += ns
		}
	}
	return sum
}

// parseSchedstat returns the first field of a schedstat line.
func parseSchedstat(b []byte) (uint64, bool) {
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return 0, false
	}
	n, err := strconv.ParseUint(f[0], 10, 64)
	return n, err == nil
}

// peakRSSKiB reads VmHWM (peak resident set, KiB) of pid.
func peakRSSKiB(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseVmHWM(b)
}

// parseVmHWM returns the VmHWM line's value of a /proc/PID/status file, in KiB.
func parseVmHWM(b []byte) (int, error) {
	for line := range strings.SplitSeq(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || name != "VmHWM" {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, errors.New("status: malformed VmHWM")
		}
		n, err := strconv.Atoi(f[0])
		if err != nil || n < 0 {
			return 0, errors.New("status: malformed VmHWM")
		}
		return n, nil
	}
	return 0, errors.New("status: no VmHWM")
}
