package main

import (
	"syscall"
	"unsafe"
)

// sleepSpec is what the forked children sleep for at a time; a global, so
// the child touches no stack it does not own.
var sleepSpec = syscall.Timespec{Sec: 3600}

// forkSleeper forks a child that sleeps until it is killed (with setsid,
// in a session and process group of its own). The child runs only raw
// system calls: after fork, only the calling thread exists, and the Go
// runtime must not run in it.
//
//go:nosplit
//go:norace
func forkSleeper(setsid bool) (int, error) {
	pid, _, errno := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	if pid != 0 {
		return int(pid), nil
	}
	if setsid {
		syscall.RawSyscall(syscall.SYS_SETSID, 0, 0, 0)
	}
	for {
		syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&sleepSpec)), 0, 0)
	}
}
