//go:build !unix

package launch

import (
	"errors"
	"fmt"
	"os"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// openOwnedFile opens path without following a final link (atomicfile.Open
// compares the name with the opened file where there is no O_NOFOLLOW).
// Ownership is not checked here.
func openOwnedFile(path string) (*os.File, error) {
	f, err := atomicfile.Open(path)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		return nil, fmt.Errorf("%s: %w; a profile must be a regular file", path, err)
	}
	return f, err
}

func checkPrivateDir(dir string) error { return nil }

func syncDir(dir string) {}
