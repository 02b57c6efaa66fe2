//go:build unix

// Package specialtest plants special files where state files belong, for
// the tests of every package that opens state files through atomicfile.
// No production code imports it.
package specialtest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Bound is how long a call may take before Within fails the test: opening
// a special file must never block, so a regression fails instead of
// hanging the suite.
const Bound = 5 * time.Second

// Within runs f and fails the test if it has not returned within Bound.
func Within(t testing.TB, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(Bound):
		t.Fatal("blocked on a special file")
	}
}

// Mkfifo replaces whatever is at path with a named pipe, making its
// folder if needed.
func Mkfifo(t testing.TB, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
}
