package testmcp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// NextSession increments the session counter in dir and returns the new
// value (1 for the first session). Concurrent callers each get their own
// number.
func NextSession(dir string) (int, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	lock := filepath.Join(dir, "session.lock")
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := os.Mkdir(lock, 0o700)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) || time.Now().After(deadline) {
			return 0, fmt.Errorf("testmcp: session counter lock: %w", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer os.Remove(lock)
	path := filepath.Join(dir, "session-count")
	n := 0
	if b, err := os.ReadFile(path); err == nil {
		n, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	n++
	if err := os.WriteFile(path, []byte(strconv.Itoa(n)+"\n"), 0o600); err != nil {
		return 0, err
	}
	return n, nil
}
