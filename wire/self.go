package wire

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// maxBinarySize bounds the mcpseal binary status hashes to compare with
// this one: today's is about 40 MiB; 512 MiB leaves room for debug builds
// and keeps a planted giant from stalling status.
const maxBinarySize = 512 << 20

// isThisBinary reports whether a wrapped line's command starts this
// mcpseal (self): self by path; else an absolute path or a bare name found
// on PATH (as the client would find it, when the entry does not set its
// own PATH) that resolves to self, or to a file with the same contents (a
// copy, or an upgrade in place seen through another path). why says what
// failed. A relative path is read from the folder the client starts the
// server in, which status cannot know.
func isThisBinary(command string, env map[string]string, self string) (ok bool, why string) {
	if filepath.Clean(command) == filepath.Clean(self) {
		return true, ""
	}
	path := command
	switch {
	case filepath.IsAbs(command):
	case strings.ContainsAny(command, `/\`):
		return false, "a relative path, read from the folder the client starts the server in"
	default:
		if _, set := env["PATH"]; set {
			return false, "a bare name looked up on the entry's own PATH"
		}
		p, err := exec.LookPath(command)
		if err != nil {
			return false, "not found on PATH"
		}
		path = p
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false, "cannot be resolved"
	}
	if me, err := filepath.EvalSymlinks(self); err == nil && me == real {
		return true, ""
	}
	mine, err := selfDigest(self)
	if err != nil {
		return false, "this binary cannot be read to compare"
	}
	theirs, err := fileDigest(real)
	if err != nil || !bytes.Equal(theirs, mine) {
		return false, "another file, not a copy of this binary"
	}
	return true, ""
}

var selfDigests sync.Map // path -> []byte

// selfDigest is the SHA-256 of this binary, computed once per path.
func selfDigest(self string) ([]byte, error) {
	if d, ok := selfDigests.Load(self); ok {
		return d.([]byte), nil
	}
	d, err := fileDigest(self)
	if err == nil {
		selfDigests.Store(self, d)
	}
	return d, err
}

// fileDigest hashes a regular file of at most maxBinarySize bytes.
func fileDigest(path string) ([]byte, error) {
	f, err := atomicfile.OpenFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxBinarySize+1))
	if err != nil {
		return nil, err
	}
	if n > maxBinarySize {
		return nil, os.ErrInvalid
	}
	return h.Sum(nil), nil
}
