//go:build !linux

package main

func forkSleeper(setsid bool) (int, error) { return 0, errUnsupported }

func attackPtrace() string { return "error: " + errUnsupported.Error() }
