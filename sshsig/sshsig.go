// Package sshsig signs and verifies SSH signatures (OpenSSH's
// PROTOCOL.sshsig): the armoured format ssh-keygen -Y sign writes, so that
//
//	ssh-keygen -Y verify -f allowed_signers -I signer -n NAMESPACE -s sig < message
//
// checks a signature made here, and a signature made by ssh-keygen verifies
// here. Only Ed25519 keys and SHA-512 message hashes are accepted.
//
// The namespace separates one use of a key from every other (a lock
// manifest, a release's SHA256SUMS, git commits, logins): a signature made
// for one namespace never verifies for another. Verify does not decide
// whether the key that made a signature is trusted; the caller compares
// it with the keys it pinned.
package sshsig

import (
	"bytes"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"

	"golang.org/x/crypto/ssh"
)

const (
	magic      = "SSHSIG"
	sigVersion = 1
	hashAlg    = "sha512"
	armorBegin = "-----BEGIN SSH SIGNATURE-----"
	armorEnd   = "-----END SSH SIGNATURE-----"
	// MaxSize bounds an armoured signature: an Ed25519 SSH signature
	// armours to about 300 bytes.
	MaxSize = 4096
)

// ErrBad is every verification failure: the form, the namespace, the key
// type and the signature itself fail alike, so that nothing about a
// hostile signature is echoed.
var ErrBad = errors.New("not a valid Ed25519 SSH signature for this namespace")

// signedData is what the key actually signs for message.
func signedData(namespace string, message []byte) []byte {
	h := sha512.Sum512(message)
	var b bytes.Buffer
	b.WriteString(magic)
	writeString(&b, []byte(namespace))
	writeString(&b, nil) // reserved
	writeString(&b, []byte(hashAlg))
	writeString(&b, h[:])
	return b.Bytes()
}

func writeString(b *bytes.Buffer, s []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(s)))
	b.Write(n[:])
	b.Write(s)
}

// Sign returns the armoured SSH signature of message by s for namespace.
func Sign(s ssh.Signer, namespace string, message []byte) (string, error) {
	if s.PublicKey().Type() != ssh.KeyAlgoED25519 {
		return "", errors.New("only Ed25519 keys sign")
	}
	sig, err := s.Sign(rand.Reader, signedData(namespace, message))
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	b.WriteString(magic)
	var v [4]byte
	binary.BigEndian.PutUint32(v[:], sigVersion)
	b.Write(v[:])
	writeString(&b, s.PublicKey().Marshal())
	writeString(&b, []byte(namespace))
	writeString(&b, nil)
	writeString(&b, []byte(hashAlg))
	writeString(&b, ssh.Marshal(sig))
	enc := base64.StdEncoding.EncodeToString(b.Bytes())
	var out strings.Builder
	out.WriteString(armorBegin + "\n")
	for len(enc) > 70 {
		out.WriteString(enc[:70] + "\n")
		enc = enc[70:]
	}
	out.WriteString(enc + "\n" + armorEnd + "\n")
	return out.String(), nil
}

// Verify checks an armoured SSH signature of message for namespace and
// returns the key that made it. It does not decide whether that key is
// trusted.
func Verify(armored, namespace string, message []byte) (ssh.PublicKey, error) {
	if len(armored) > MaxSize {
		return nil, ErrBad
	}
	body, ok := strings.CutPrefix(strings.TrimSpace(armored), armorBegin)
	if !ok {
		return nil, ErrBad
	}
	body, ok = strings.CutSuffix(body, armorEnd)
	if !ok {
		return nil, ErrBad
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(body), ""))
	if err != nil || !bytes.HasPrefix(raw, []byte(magic)) {
		return nil, ErrBad
	}
	var blob struct {
		Version   uint32
		PublicKey []byte
		Namespace string
		Reserved  []byte
		Hash      string
		Signature []byte
	}
	if err := ssh.Unmarshal(raw[len(magic):], &blob); err != nil {
		return nil, ErrBad
	}
	if blob.Version != sigVersion || blob.Namespace != namespace || len(blob.Reserved) != 0 || blob.Hash != hashAlg {
		return nil, ErrBad
	}
	key, err := ssh.ParsePublicKey(blob.PublicKey)
	if err != nil || key.Type() != ssh.KeyAlgoED25519 {
		return nil, ErrBad
	}
	var sig ssh.Signature
	if err := ssh.Unmarshal(blob.Signature, &sig); err != nil || sig.Format != ssh.KeyAlgoED25519 {
		return nil, ErrBad
	}
	if err := key.Verify(signedData(namespace, message), &sig); err != nil {
		return nil, ErrBad
	}
	return key, nil
}
