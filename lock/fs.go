package lock

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// readBounded reads the regular file at path, refusing one larger than
// limit. A missing file's error satisfies errors.Is(err, fs.ErrNotExist).
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(path), limit)
	}
	return data, nil
}

// WriteFileAtomic replaces path with data: a temporary file in the same
// folder, fsync, rename, fsync of the folder. perm applies to a new file.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return syncDir(dir)
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
	data, err := readBounded(path, MaxLockSize)
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
	data, err := readBounded(lockPath+ManifestSuffix, maxManifest)
	if err != nil {
		return nil, err
	}
	return ParseManifest(data)
}
