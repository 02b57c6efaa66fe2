package launch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
)

// Bounds on what is hashed at every launch.
const (
	// MaxExecutableSize: Node.js is about 100 MB, a statically linked
	// Python or Bun a little more; 1 GiB leaves room without letting a
	// huge file stall a launch for long.
	MaxExecutableSize = 1 << 30
	// MaxTreeFiles: a large node_modules holds some tens of thousands of
	// files.
	MaxTreeFiles = 200_000
	// MaxTreeBytes: the bytes of a tree's files together.
	MaxTreeBytes = 4 << 30
	// maxTreeDepth bounds folder nesting.
	maxTreeDepth = 128
)

// HashExecutable returns "sha256:" and the hex SHA-256 of f's bytes,
// reading f from offset 0 without moving its offset. It refuses a file
// that changes size or modification time while it is read.
func HashExecutable(f *os.File) (string, error) {
	before, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !before.Mode().IsRegular() {
		return "", errors.New("the executable is not a regular file")
	}
	if before.Size() > MaxExecutableSize {
		return "", fmt.Errorf("the executable is larger than %d bytes", MaxExecutableSize)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, before.Size())); err != nil {
		return "", err
	}
	after, err := f.Stat()
	if err != nil {
		return "", err
	}
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		return "", errors.New("the executable changed while it was hashed")
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
