//go:build !unix

package launch

import (
	"os"
)

func openOwnedFile(path string) (*os.File, error) { return os.Open(path) }

func checkPrivateDir(dir string) error { return nil }

func syncDir(dir string) {}
