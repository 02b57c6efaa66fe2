package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"golang.org/x/crypto/ssh"
)

// ManifestSuffix names the signed manifest beside a lock:
// mcpseal.lock.manifest.
const ManifestSuffix = ".manifest"

// ManifestFormat is the manifest's format tag.
const ManifestFormat = "mcpseal-lock-manifest/1"

// maxManifest bounds a manifest file: a few hundred bytes of JSON.
const maxManifest = 64 << 10

// Errors of signature checking. Each names one way a signed lock is
// refused.
var (
	// ErrUnsigned: a host config requires a signed manifest and there is
	// none beside the lock.
	ErrUnsigned = errors.New("lock: the lock is not signed")
	// ErrBadSignature: the manifest is malformed or its signature does not
	// verify.
	ErrBadSignature = errors.New("lock: the manifest's signature is invalid")
	// ErrUntrustedKey: the signature verifies, by a key the host config
	// does not trust.
	ErrUntrustedKey = errors.New("lock: the manifest is signed by a key this host does not trust")
	// ErrDigestMismatch: the manifest is for another lock (the lock
	// changed after signing).
	ErrDigestMismatch = errors.New("lock: the manifest's digest does not match the lock")
	// ErrRollback: the manifest's sequence number is lower than one this
	// host has seen (or equal, for another lock).
	ErrRollback = errors.New("lock: the manifest is older than one this host has seen (rollback)")
)

// Manifest is the signed statement about one version of a lock.
type Manifest struct {
	Format string `json:"format"`
	// LockDigest is "sha256:" and the hex SHA-256 of the lock file's bytes
	// (with CRLF line ends read as LF).
	LockDigest string `json:"lock_digest"`
	// Sequence only grows: a host refuses a manifest with a lower number
	// than it has seen.
	Sequence uint64 `json:"sequence"`
	// SignedAt is RFC 3339 UTC; informative, but signed.
	SignedAt string `json:"signed_at"`
	// Key is the signer's public key, "ssh-ed25519 AAAA...".
	Key string `json:"key"`
	// Signature is the armoured SSH signature of Statement().
	Signature string `json:"signature"`
}

// Statement is the text that is signed:
//
//	mcpseal lock manifest v1
//	lock sha256:<hex>
//	sequence <n>
//	signed-at <time>
//
// each line ending in "\n".
func (m *Manifest) Statement() []byte {
	return fmt.Appendf(nil, "mcpseal lock manifest v1\nlock %s\nsequence %d\nsigned-at %s\n", m.LockDigest, m.Sequence, m.SignedAt)
}

// LockDigest is the digest a manifest records for lock file bytes.
func LockDigest(lockFile []byte) string { return digestOf(normalizeNewlines(lockFile)) }

// Sign makes the manifest of lockFile with sequence seq, signed by s at
// now.
func Sign(lockFile []byte, seq uint64, now time.Time, s ssh.Signer) (*Manifest, error) {
	if s.PublicKey().Type() != ssh.KeyAlgoED25519 {
		return nil, ErrNotEd25519
	}
	if seq == 0 {
		return nil, errors.New("lock: sequence numbers start at 1")
	}
	m := &Manifest{
		Format:     ManifestFormat,
		LockDigest: LockDigest(lockFile),
		Sequence:   seq,
		SignedAt:   now.UTC().Truncate(time.Second).Format(time.RFC3339),
		Key:        KeyString(s.PublicKey()),
	}
	sig, err := sshSign(s, m.Statement())
	if err != nil {
		return nil, err
	}
	m.Signature = sig
	return m, nil
}

// Marshal encodes the manifest as indented JSON with a final newline.
func (m *Manifest) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ParseManifest reads a manifest. It checks the form, not the signature.
func ParseManifest(data []byte) (*Manifest, error) {
	if len(data) > maxManifest {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrBadSignature, maxManifest)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: not a manifest", ErrBadSignature)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the manifest", ErrBadSignature)
	}
	if m.Format != ManifestFormat {
		return nil, fmt.Errorf("%w: unknown manifest format %s", ErrBadSignature, strconv.Quote(truncate(m.Format, 40)))
	}
	if !digestRe().MatchString(m.LockDigest) || m.Sequence == 0 {
		return nil, fmt.Errorf("%w: no valid lock digest and sequence", ErrBadSignature)
	}
	if t, err := time.Parse(time.RFC3339, m.SignedAt); err != nil || t.UTC().Format(time.RFC3339) != m.SignedAt {
		return nil, fmt.Errorf("%w: signed_at is not RFC 3339 UTC", ErrBadSignature)
	}
	return &m, nil
}

// Verify checks that the manifest is signed by one of trusted and
// describes lockFile. It returns ErrBadSignature, ErrUntrustedKey or
// ErrDigestMismatch (wrapped).
func (m *Manifest) Verify(lockFile []byte, trusted []ssh.PublicKey) error {
	key, err := sshVerify(m.Signature, m.Statement())
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	if named, err := ParsePublicKey(m.Key); err != nil || !sameKey(named, key) {
		return fmt.Errorf("%w: the key member does not name the signing key", ErrBadSignature)
	}
	ok := false
	for _, t := range trusted {
		ok = ok || sameKey(t, key)
	}
	if !ok {
		return fmt.Errorf("%w: %s", ErrUntrustedKey, describeKey(key))
	}
	if m.LockDigest != LockDigest(lockFile) {
		return fmt.Errorf("%w: it signs %s, the lock is %s", ErrDigestMismatch, m.LockDigest, LockDigest(lockFile))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
