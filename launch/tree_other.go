//go:build !unix

package launch

import "errors"

// TreeStats describes a hashed tree.
type TreeStats struct {
	Files, Symlinks int
	Bytes           int64
}

// TreeDigest needs descriptor-relative opens; see tree.go.
func TreeDigest(dir string) (string, TreeStats, error) {
	return "", TreeStats{}, errors.New("package tree digests need a unix system")
}
