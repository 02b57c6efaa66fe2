package lock

import (
	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"os"
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
// (see Load for those).
func ReadFile(path string) (*Lock, []byte, error) {
	data, err := atomicfile.ReadFile(path, MaxLockSize)
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

// ReadManifest reads the manifest beside the lock at lockPath.
func ReadManifest(lockPath string) (*Manifest, error) {
	data, err := atomicfile.ReadFile(lockPath+ManifestSuffix, maxManifest)
	if err != nil {
		return nil, err
	}
	return ParseManifest(data)
}
