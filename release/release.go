// Package release defines what a mcpseal release is made of and how a
// downloaded one is checked: the SHA256SUMS file that lists every
// artifact's digest, and the SSH signature over it (SHA256SUMS.sig,
// namespace "mcpseal-release") by the release key.
//
// SHA256SUMS is exactly what `sha256sum` writes and `sha256sum -c` reads:
// one line per artifact, the lowercase hex SHA-256, two spaces, the file
// name; LF line ends; names sorted bytewise, each a plain file name (no
// folder, no leading dot or dash), each listed once:
//
//	9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  mcpseal_0.3.0_linux_amd64.tar.gz
//	60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752  mcpseal_0.3.0_sbom.cdx.json
//
// Only that canonical form is accepted (ParseSums re-encodes what it read
// and refuses any difference), so a file one tool reads one way cannot be
// read another way by another.
//
// The signature is checked against keys the verifier pinned beforehand;
// a key that arrives with the download proves nothing, and none is ever
// read from it. Check it with mcpseal:
//
//	mcpseal verify-release SHA256SUMS SHA256SUMS.sig
//
// or with OpenSSH alone:
//
//	echo "release ssh-ed25519 AAAA..." > allowed_signers
//	ssh-keygen -Y verify -f allowed_signers -I release -n mcpseal-release -s SHA256SUMS.sig < SHA256SUMS
//	sha256sum -c --ignore-missing SHA256SUMS
package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/mcpseal/mcpseal/sshsig"
)

// Namespace is the SSH signature namespace of SHA256SUMS.sig: a release
// signature never verifies as a lock manifest's, or the other way round.
const Namespace = "mcpseal-release"

// Limits on what a download may make us read.
const (
	// MaxSums bounds SHA256SUMS: a release lists a few dozen artifacts of
	// about 100 bytes a line.
	MaxSums = 64 << 10
	// MaxEntries bounds the artifacts one SHA256SUMS may list.
	MaxEntries = 512
	// maxName bounds an artifact's file name.
	maxName = 128
)

// Entry is one line of SHA256SUMS.
type Entry struct {
	// Digest is the lowercase hex SHA-256 of the file.
	Digest string
	// Name is the file name.
	Name string
}

// Sums is a parsed SHA256SUMS, sorted by name.
type Sums struct {
	Entries []Entry
}

// ErrNotCanonical is returned for any SHA256SUMS that is not in the one
// form scripts/release writes.
var ErrNotCanonical = errors.New("SHA256SUMS is not in canonical form (lines of 64 lowercase hex digits, two spaces and a plain file name, sorted, each name once, LF line ends)")

// Marshal returns the canonical SHA256SUMS text.
func (s *Sums) Marshal() []byte {
	var b bytes.Buffer
	for _, e := range s.Entries {
		b.WriteString(e.Digest)
		b.WriteString("  ")
		b.WriteString(e.Name)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// NewSums returns the sums of the named digests, sorted; it refuses names
// that are not plain file names and repeated names.
func NewSums(digests map[string]string) (*Sums, error) {
	s := &Sums{}
	for name, d := range digests {
		if !ValidName(name) {
			return nil, fmt.Errorf("artifact name %q is not a plain file name", name)
		}
		if !validDigest(d) {
			return nil, fmt.Errorf("artifact %s: digest is not 64 lowercase hex digits", name)
		}
		s.Entries = append(s.Entries, Entry{Digest: d, Name: name})
	}
	slices.SortFunc(s.Entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	if len(s.Entries) == 0 || len(s.Entries) > MaxEntries {
		return nil, fmt.Errorf("a release lists 1 to %d artifacts, not %d", MaxEntries, len(s.Entries))
	}
	return s, nil
}

// ParseSums reads a canonical SHA256SUMS.
func ParseSums(data []byte) (*Sums, error) {
	if len(data) == 0 || len(data) > MaxSums || data[len(data)-1] != '\n' {
		return nil, ErrNotCanonical
	}
	lines := strings.Split(string(data[:len(data)-1]), "\n")
	if len(lines) > MaxEntries {
		return nil, ErrNotCanonical
	}
	s := &Sums{}
	for _, l := range lines {
		d, name, ok := strings.Cut(l, "  ")
		if !ok || !validDigest(d) || !ValidName(name) {
			return nil, ErrNotCanonical
		}
		if n := len(s.Entries); n > 0 && s.Entries[n-1].Name >= name {
			return nil, ErrNotCanonical // unsorted or repeated
		}
		s.Entries = append(s.Entries, Entry{Digest: d, Name: name})
	}
	if !bytes.Equal(s.Marshal(), data) {
		return nil, ErrNotCanonical
	}
	return s, nil
}

// Lookup returns the entry for name.
func (s *Sums) Lookup(name string) (Entry, bool) {
	i, ok := slices.BinarySearchFunc(s.Entries, name, func(e Entry, n string) int { return strings.Compare(e.Name, n) })
	if !ok {
		return Entry{}, false
	}
	return s.Entries[i], true
}

func validDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	for _, c := range []byte(d) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ValidName reports whether name may be an artifact's name: letters,
// digits and "._+@-", not starting with "." or "-", at most 128 bytes.
func ValidName(name string) bool {
	if name == "" || len(name) > maxName || name[0] == '.' || name[0] == '-' {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._+@-", c) >= 0) {
			return false
		}
	}
	return true
}

// Sign returns SHA256SUMS.sig for sums, by s.
func Sign(s ssh.Signer, sums []byte) ([]byte, error) {
	sig, err := sshsig.Sign(s, Namespace, sums)
	return []byte(sig), err
}

// ErrUntrustedKey: the signature is good, by a key nobody pinned.
var ErrUntrustedKey = errors.New("SHA256SUMS.sig was made by a key that is not a pinned release key")

// ErrBadSignature: SHA256SUMS.sig is not a valid signature of these sums.
var ErrBadSignature = errors.New("SHA256SUMS.sig is not a valid signature of this SHA256SUMS (namespace " + Namespace + ")")

// Verify checks sig over sums against the pinned keys and returns the
// parsed sums and the key that signed them. Nothing in sums is read
// before the signature verifies.
func Verify(sums, sig []byte, pinned []ssh.PublicKey) (*Sums, ssh.PublicKey, error) {
	if len(pinned) == 0 {
		return nil, nil, errors.New("no pinned release key")
	}
	if len(sums) > MaxSums {
		return nil, nil, ErrNotCanonical
	}
	k, err := sshsig.Verify(string(sig), Namespace, sums)
	if err != nil {
		return nil, nil, ErrBadSignature
	}
	if !slices.ContainsFunc(pinned, func(p ssh.PublicKey) bool { return bytes.Equal(p.Marshal(), k.Marshal()) }) {
		return nil, k, ErrUntrustedKey
	}
	s, err := ParseSums(sums)
	if err != nil {
		return nil, k, err
	}
	return s, k, nil
}

// MaxArtifact bounds the bytes hashed for one artifact: a release archive
// is a few tens of MiB; a bigger file is not one of ours.
const MaxArtifact = 1 << 30

// ErrTooLarge: an artifact is larger than MaxArtifact.
var ErrTooLarge = errors.New("artifact is larger than any mcpseal release artifact")

// Digest returns the hex SHA-256 of r, reading at most MaxArtifact bytes.
func Digest(r io.Reader) (string, error) {
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, MaxArtifact+1))
	if err != nil {
		return "", err
	}
	if n > MaxArtifact {
		return "", ErrTooLarge
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
