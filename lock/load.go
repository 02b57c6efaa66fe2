package lock

import (
	"errors"
	"fmt"
	"io/fs"
)

// Load reads the lock at path for enforcement, failing closed: a lock
// that is missing, unreadable, of an unknown version or fails its
// integrity check is an error, never an empty lock.
//
// With a host config (nil: none), it also requires the signed manifest
// beside the lock: the host files must lie outside the lock's repository
// (ErrInsideRepository), the manifest must exist (ErrUnsigned), verify
// (ErrBadSignature), be signed by a trusted key (ErrUntrustedKey), name
// this lock's digest (ErrDigestMismatch) and carry a sequence number no
// lower than the host has seen (ErrRollback). An accepted manifest's
// sequence number is recorded in the host's sequence store.
func Load(path string, host *HostConfig) (*Lock, error) {
	l, data, err := ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("lock: %s does not exist: %w", path, err)
	case err != nil:
		return nil, fmt.Errorf("lock: %s: %w", path, err)
	}
	if host == nil {
		return l, nil
	}
	if err := CheckSignature(path, data, host); err != nil {
		return nil, err
	}
	return l, nil
}

// CheckSignature checks the manifest beside the lock at path (whose bytes
// are data) against host, and records its sequence number (see Load).
func CheckSignature(path string, data []byte, host *HostConfig) error {
	if err := host.CheckOutside(path); err != nil {
		return err
	}
	m, err := ReadManifest(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: no %s beside %s", ErrUnsigned, path+ManifestSuffix, path)
	case err != nil:
		return err
	}
	if err := m.Verify(data, host.keys); err != nil {
		return err
	}
	key, err := sequenceKey(path)
	if err != nil {
		return err
	}
	return host.Sequences().Accept(key, m.Sequence, m.LockDigest)
}
