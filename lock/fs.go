package lock

import (
	"errors"
	"fmt"
	"os"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// WriteFileAtomic replaces path with data atomically (temporary file,
// fsync, rename, fsync of the folder); perm applies to a new file.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return atomicfile.WriteFile(path, data, perm)
}

// Write writes l to path atomically (0644: a lock is committed and read
// by everyone).
func (l *Lock) Write(path string) error {
	data, err := l.Marshal()
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, data, 0o644)
}

// ReadFile reads and parses the lock at path, with no signature checks
// (see Load for those). The lock must be a regular file: a FIFO, a device
// or a symbolic link at path is refused without blocking, with an error
// wrapping ErrTampered. A link is refused even though git can check one
// out: it may point outside the repository, at bytes no review saw; name
// the real file with --lock instead.
func ReadFile(path string) (*Lock, []byte, error) {
	data, err := atomicfile.ReadFile(path, MaxLockSize)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		return nil, nil, fmt.Errorf("%w: %v", ErrTampered, err)
	}
	if err != nil {
		return nil, nil, err
	}
	l, err := Parse(data)
	return l, data, err
}

// WriteManifest writes m beside the lock at lockPath, atomically.
func WriteManifest(lockPath string, m *Manifest) error {
	data, err := m.Marshal()
	if err != nil {
		return err
	}
	return WriteFileAtomic(lockPath+ManifestSuffix, data, 0o644)
}

// ReadManifest reads the manifest beside the lock at lockPath. Like the
// lock, it must be a regular file, not a link.
func ReadManifest(lockPath string) (*Manifest, error) {
	data, err := atomicfile.ReadFile(lockPath+ManifestSuffix, maxManifest)
	if err != nil {
		return nil, err
	}
	return ParseManifest(data)
}
