//go:build !unix && !windows

package audit

import (
	"errors"
	"os"
)

// lockFile fails: without a file lock the log cannot be shared safely
// between processes, and a log that cannot be locked is not written.
func lockFile(*os.File, bool) error {
	return errors.New("the audit log needs file locks, which this system does not provide")
}

func unlockFile(*os.File) error { return nil }

func syncDir(string) error { return nil }
