package tlog

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"golang.org/x/mod/sumdb/note"
)

// Keys are note keys (C2SP signed-note, Ed25519). The signing key of a log
// lives in $MCPSEAL_HOME/keys/tlog-<origin with "/" as "_">.key (0600, in
// a 0700 folder), never in the log folder; the verifier key
// "<origin>+<hash>+<base64>" is what verifiers pin.

// maxKeyFile bounds a key file: a note key is under 200 bytes.
const maxKeyFile = 4 << 10

// KeyPath returns where the signing key of the log named origin is kept
// under home.
func KeyPath(home, origin string) string {
	return filepath.Join(home, "keys", "tlog-"+strings.ReplaceAll(origin, "/", "_")+".key")
}

// GenerateKey creates a signing key for the log named origin and saves it
// at KeyPath(home, origin); it refuses to replace an existing key. It
// returns the verifier key.
func GenerateKey(rand io.Reader, home, origin string) (vkey string, err error) {
	if !ValidOrigin(origin) {
		return "", errors.New("tlog: invalid origin: use 1 to 128 of A-Z a-z 0-9 . _ / -")
	}
	skey, vkey, err := note.GenerateKey(rand, origin)
	if err != nil {
		return "", err
	}
	p := KeyPath(home, origin)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("a signing key for %s already exists at %s", origin, p)
	}
	if err != nil {
		return "", err
	}
	_, werr := f.WriteString(skey + "\n")
	serr := f.Sync()
	if err := errors.Join(werr, serr, f.Close()); err != nil {
		os.Remove(p)
		return "", err
	}
	return vkey, nil
}

// LoadSigner reads the signing key of the log named origin.
func LoadSigner(home, origin string) (note.Signer, note.Verifier, error) {
	skey, err := readSigningKey(home, origin)
	if err != nil {
		return nil, nil, err
	}
	s, _, v, err := parseSigner(skey)
	return s, v, err
}

// LoadVerifierKey returns the verifier key ("name+hash+base64") of the
// log named origin whose signing key is kept under home: what a verifier
// of this machine's own log pins.
func LoadVerifierKey(home, origin string) (string, error) {
	skey, err := readSigningKey(home, origin)
	if err != nil {
		return "", err
	}
	_, vkey, _, err := parseSigner(skey)
	return vkey, err
}

// readSigningKey reads the signing key file of the log named origin.
func readSigningKey(home, origin string) (string, error) {
	p := KeyPath(home, origin)
	// The signing key is mcpseal's own file: not a link, not a FIFO.
	f, err := atomicfile.Open(p)
	if err != nil {
		return "", fmt.Errorf("reading the log's signing key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("reading the log's signing key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is readable by other users; run chmod 600 on it", p)
	}
	b, err := readSmallFrom(f, p, maxKeyFile)
	if err != nil {
		return "", fmt.Errorf("reading the log's signing key: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// ParseSigner parses a note signing key and derives its verifier.
func ParseSigner(skey string) (note.Signer, note.Verifier, error) {
	s, _, v, err := parseSigner(skey)
	return s, v, err
}

func parseSigner(skey string) (note.Signer, string, note.Verifier, error) {
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, "", nil, errors.New("tlog: malformed signing key")
	}
	// PRIVATE+KEY+<name>+<hash>+<base64 of 0x01 and the seed>
	rest := skey
	for range 4 {
		_, rest, _ = strings.Cut(rest, "+")
	}
	raw, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 1 {
		return nil, "", nil, errors.New("tlog: not an Ed25519 signing key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(s.Name(), pub)
	if err != nil {
		return nil, "", nil, err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, "", nil, err
	}
	return s, vkey, v, nil
}

// ParseVerifier parses a log's verifier key (Ed25519, "name+hash+base64").
func ParseVerifier(vkey string) (note.Verifier, error) {
	v, err := note.NewVerifier(strings.TrimSpace(vkey))
	if err != nil {
		return nil, errors.New("tlog: malformed verifier key (want name+hash+base64)")
	}
	if !ValidOrigin(v.Name()) {
		return nil, errors.New("tlog: the verifier key's name is not a valid origin")
	}
	return v, nil
}

// ReadVerifierFile reads a pinned verifier key file (one line).
func ReadVerifierFile(path string) (note.Verifier, error) {
	b, err := readSmallFile(path, maxKeyFile)
	if err != nil {
		return nil, err
	}
	return ParseVerifier(string(b))
}

// ReadWitnessFile reads a witness verifier key file (one line).
func ReadWitnessFile(path string) (note.Verifier, error) {
	b, err := readSmallFile(path, maxKeyFile)
	if err != nil {
		return nil, err
	}
	return NewWitnessVerifier(strings.TrimSpace(string(b)))
}

// readSmallFile reads a key or checkpoint file a person names (a final
// link is followed) without blocking on a FIFO or device.
func readSmallFile(path string, limit int64) ([]byte, error) {
	f, err := atomicfile.OpenFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readSmallFrom(f, path, limit)
}

func readSmallFrom(f *os.File, path string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s", ErrTooLarge, path)
	}
	return b, nil
}
