package tlog

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A Checkpoint is the body of a signed checkpoint: the log's origin, the
// tree size and the root hash.
type Checkpoint struct {
	Origin string
	Size   int64
	Root   Hash
}

// maxOrigin bounds an origin line: a host name and a path.
const maxOrigin = 128

// ErrMalformedCheckpoint reports a checkpoint body that is not the
// canonical three-line form.
var ErrMalformedCheckpoint = errors.New("tlog: malformed checkpoint")

// Format returns the checkpoint body: three lines, each ending in "\n".
func (c Checkpoint) Format() []byte {
	return fmt.Appendf(nil, "%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Root[:]))
}

// String is the body on one line, for messages: "origin size root".
func (c Checkpoint) String() string {
	return fmt.Sprintf("%s %d %s", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Root[:]))
}

// ValidOrigin reports whether s may be a log's origin and key name:
// 1 to 128 of [A-Za-z0-9._/-], starting with a letter or digit.
func ValidOrigin(s string) bool {
	if s == "" || len(s) > maxOrigin {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != '/' && c != '-')) {
			return false
		}
	}
	return true
}

// ParseCheckpoint parses a checkpoint body. It accepts exactly the form
// Format writes: no extension lines, a size without sign or leading zeros,
// a root in padded standard base64 of 32 bytes.
func ParseCheckpoint(text []byte) (Checkpoint, error) {
	if len(text) > maxOrigin+64 || !bytes.HasSuffix(text, []byte("\n")) {
		return Checkpoint{}, ErrMalformedCheckpoint
	}
	lines := strings.Split(string(text[:len(text)-1]), "\n")
	if len(lines) != 3 || !ValidOrigin(lines[0]) {
		return Checkpoint{}, ErrMalformedCheckpoint
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 {
		return Checkpoint{}, ErrMalformedCheckpoint
	}
	h, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(h) != len(Hash{}) {
		return Checkpoint{}, ErrMalformedCheckpoint
	}
	c := Checkpoint{Origin: lines[0], Size: n}
	copy(c.Root[:], h)
	if !bytes.Equal(c.Format(), text) {
		return Checkpoint{}, ErrMalformedCheckpoint
	}
	return c, nil
}
