//go:build !unix

package lock

import "os"

// lockFile is a no-op where flock is missing: the sequence store is then
// safe for one process at a time only (rename keeps it whole).
func lockFile(*os.File) error { return nil }

func syncDir(string) error { return nil }
