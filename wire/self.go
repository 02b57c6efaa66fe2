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
	if command == self && filepath.IsAbs(self) && filepath.Clean(self) == self {
		return true, "" // the binary that runs now, named as it is
	}
	path := command
	switch {
	case filepath.IsAbs(command):
		// Compared as the kernel resolves it, never as text: "DIR/.."
		// through a link named DIR is not the folder that holds DIR.
		if filepath.Clean(command) != command || hasDotDot(command) {
			return false, "a path that is not in clean form (a .. or . segment, a repeated or trailing separator)"
		}
	case strings.ContainsAny(command, `/\`):
		return false, "a relative path, read from the folder the client starts the server in"
	default:
		if _, set := env["PATH"]; set {
			return false, "a bare name looked up on the entry's own PATH"
		}
		for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
			if dir == "" || !filepath.IsAbs(dir) {
				// The client resolves it from the folder it starts the
				// server in, which status cannot know.
				return false, "a bare name, and PATH has a relative or empty entry"
			}
		}
		p, err := exec.LookPath(command)
		if err != nil {
			return false, "not found on PATH"
		}
		path = p
	}
	if why := untrustedWay(path); why != "" {
		return false, why
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

// hasDotDot reports whether path has a ".." segment.
func hasDotDot(path string) bool {
	for _, seg := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}

// untrustedWay says why path, or a folder on the way to it, could be
// changed by someone other than this user or root (a link in /tmp that
// points at this binary today and elsewhere tomorrow); "" when it cannot.
func untrustedWay(path string) string {
	for p := path; ; {
		fi, err := os.Lstat(p)
		if err != nil {
			return "cannot be read"
		}
		if !trustedByUser(fi) {
			return "it, or a folder on the way to it, can be changed by another user (" + p + ")"
		}
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		p = parent
	}
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
