//go:build !unix && !windows

package pin

import (
	"errors"
	"os"
)

// lockFile fails: without a file lock the store cannot be shared safely,
// and a store that cannot be locked is not used.
func lockFile(*os.File, bool) error {
	return errors.New("the pin store needs file locks, which this system does not provide")
}

func syncDir(string) error { return nil }
