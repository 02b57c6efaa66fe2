package tlog

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// Witness cosignatures follow C2SP tlog-cosignature ("cosignature/v1"): a
// witness that has checked a checkpoint is consistent with every earlier
// one it saw signs
//
//	cosignature/v1
//	time <seconds since the epoch>
//	<checkpoint body>
//
// with Ed25519. Its note signature is the 4-byte key hash, the timestamp as
// a big-endian uint64 and the 64-byte signature; its verifier key is
// <name>+<hash>+<base64 of 0x04 and the public key>, the key hash being the
// first four bytes of SHA-256(name, "\n", 0x04, public key).

const algCosignatureV1 = 0x04

// cosigTimeLimit bounds a cosignature's timestamp: 2^63-1 seconds would
// overflow time.Time arithmetic, and no witness signs past year 9999.
const cosigTimeLimit = 253402300799

func cosignKeyHash(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte("\n"))
	h.Write([]byte{algCosignatureV1})
	h.Write(pub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

func cosignedMessage(body []byte, t uint64) []byte {
	m := []byte("cosignature/v1\ntime " + strconv.FormatUint(t, 10) + "\n")
	return append(m, body...)
}

// A Cosigner signs checkpoints as a witness. It is a note.Signer.
type Cosigner struct {
	name string
	hash uint32
	priv ed25519.PrivateKey
	now  func() time.Time
}

// NewCosigner returns a witness signer named name that timestamps with now.
func NewCosigner(name string, priv ed25519.PrivateKey, now func() time.Time) (*Cosigner, error) {
	if !ValidOrigin(name) || len(priv) != ed25519.PrivateKeySize {
		return nil, errors.New("tlog: invalid witness name or key")
	}
	pub := priv.Public().(ed25519.PublicKey)
	return &Cosigner{name: name, hash: cosignKeyHash(name, pub), priv: priv, now: now}, nil
}

func (s *Cosigner) Name() string    { return s.name }
func (s *Cosigner) KeyHash() uint32 { return s.hash }

// Sign returns the timestamp and signature of the checkpoint body msg.
func (s *Cosigner) Sign(msg []byte) ([]byte, error) {
	t := uint64(s.now().Unix())
	sig := make([]byte, 8, 8+ed25519.SignatureSize)
	binary.BigEndian.PutUint64(sig, t)
	return append(sig, ed25519.Sign(s.priv, cosignedMessage(msg, t))...), nil
}

// VerifierKey returns the witness's verifier key.
func (s *Cosigner) VerifierKey() string {
	pub := s.priv.Public().(ed25519.PublicKey)
	return fmt.Sprintf("%s+%08x+%s", s.name, s.hash,
		base64.StdEncoding.EncodeToString(append([]byte{algCosignatureV1}, pub...)))
}

// GenerateWitness returns a new witness signer (for tests and for running
// a witness).
func GenerateWitness(rand io.Reader, name string, now func() time.Time) (*Cosigner, error) {
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, err
	}
	return NewCosigner(name, priv, now)
}

// A cosignVerifier checks cosignature/v1 signatures. It is a note.Verifier.
type cosignVerifier struct {
	name string
	hash uint32
	pub  ed25519.PublicKey
}

// NewWitnessVerifier parses a witness's verifier key (cosignature/v1).
func NewWitnessVerifier(vkey string) (note.Verifier, error) {
	name, rest, ok1 := strings.Cut(vkey, "+")
	hexHash, b64, ok2 := strings.Cut(rest, "+")
	if !ok1 || !ok2 || !ValidOrigin(name) || len(hexHash) != 8 {
		return nil, errors.New("tlog: malformed witness key")
	}
	h, err := strconv.ParseUint(hexHash, 16, 32)
	if err != nil || fmt.Sprintf("%08x", h) != hexHash {
		return nil, errors.New("tlog: malformed witness key")
	}
	key, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(key) != 1+ed25519.PublicKeySize || key[0] != algCosignatureV1 {
		return nil, errors.New("tlog: not a cosignature/v1 witness key")
	}
	pub := ed25519.PublicKey(key[1:])
	if uint32(h) != cosignKeyHash(name, pub) {
		return nil, errors.New("tlog: witness key hash does not match the key")
	}
	return &cosignVerifier{name: name, hash: uint32(h), pub: pub}, nil
}

func (v *cosignVerifier) Name() string    { return v.name }
func (v *cosignVerifier) KeyHash() uint32 { return v.hash }

func (v *cosignVerifier) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	return t <= cosigTimeLimit && ed25519.Verify(v.pub, cosignedMessage(msg, t), sig[8:])
}
