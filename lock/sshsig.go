package lock

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

// The signature of a manifest is an SSH signature (OpenSSH's
// PROTOCOL.sshsig): the format ssh-keygen -Y sign writes, so
//
//	ssh-keygen -Y verify -f allowed_signers -I signer -n mcpseal-lock -s sig < statement
//
// checks it too. Only Ed25519 keys and SHA-512 message hashes are accepted.

// SignatureNamespace separates mcpseal's signatures from every other use
// of the same key (git commits, files, ssh logins).
const SignatureNamespace = "mcpseal-lock"

const (
	sshsigMagic   = "SSHSIG"
	sshsigVersion = 1
	sshsigHash    = "sha512"
	armorBegin    = "-----BEGIN SSH SIGNATURE-----"
	armorEnd      = "-----END SSH SIGNATURE-----"
	maxSignature  = 4096 // an Ed25519 SSH signature armours to about 300 bytes
)

var errBadSignature = errors.New("not an Ed25519 SSH signature of namespace " + SignatureNamespace)

// signedData is what the key actually signs for message.
func signedData(message []byte) []byte {
	h := sha512.Sum512(message)
	var b bytes.Buffer
	b.WriteString(sshsigMagic)
	writeString(&b, []byte(SignatureNamespace))
	writeString(&b, nil) // reserved
	writeString(&b, []byte(sshsigHash))
	writeString(&b, h[:])
	return b.Bytes()
}

func writeString(b *bytes.Buffer, s []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(s)))
	b.Write(n[:])
	b.Write(s)
}

// sshSign returns the armoured SSH signature of message by s.
func sshSign(s ssh.Signer, message []byte) (string, error) {
	sig, err := s.Sign(rand.Reader, signedData(message))
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	b.WriteString(sshsigMagic)
	var v [4]byte
	binary.BigEndian.PutUint32(v[:], sshsigVersion)
	b.Write(v[:])
	writeString(&b, s.PublicKey().Marshal())
	writeString(&b, []byte(SignatureNamespace))
	writeString(&b, nil)
	writeString(&b, []byte(sshsigHash))
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

// sshVerify checks an armoured SSH signature of message and returns the
// key that made it. It does not decide whether that key is trusted.
func sshVerify(armored string, message []byte) (ssh.PublicKey, error) {
	if len(armored) > maxSignature {
		return nil, errBadSignature
	}
	body, ok := strings.CutPrefix(strings.TrimSpace(armored), armorBegin)
	if !ok {
		return nil, errBadSignature
	}
	body, ok = strings.CutSuffix(body, armorEnd)
	if !ok {
		return nil, errBadSignature
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(body), ""))
	if err != nil || !bytes.HasPrefix(raw, []byte(sshsigMagic)) {
		return nil, errBadSignature
	}
	var blob struct {
		Version   uint32
		PublicKey []byte
		Namespace string
		Reserved  []byte
		Hash      string
		Signature []byte
	}
	if err := ssh.Unmarshal(raw[len(sshsigMagic):], &blob); err != nil {
		return nil, errBadSignature
	}
	if blob.Version != sshsigVersion || blob.Namespace != SignatureNamespace || len(blob.Reserved) != 0 || blob.Hash != sshsigHash {
		return nil, errBadSignature
	}
	key, err := ssh.ParsePublicKey(blob.PublicKey)
	if err != nil || key.Type() != ssh.KeyAlgoED25519 {
		return nil, errBadSignature
	}
	var sig ssh.Signature
	if err := ssh.Unmarshal(blob.Signature, &sig); err != nil || sig.Format != ssh.KeyAlgoED25519 {
		return nil, errBadSignature
	}
	if err := key.Verify(signedData(message), &sig); err != nil {
		return nil, errBadSignature
	}
	return key, nil
}
