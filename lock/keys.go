package lock

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Keys are Ed25519 keys in OpenSSH's formats: a private key file as
// ssh-keygen -t ed25519 writes it ("OPENSSH PRIVATE KEY"), and a public
// key as one authorized_keys line ("ssh-ed25519 AAAA... comment"). So a
// team may sign with a key it already uses for ssh-keygen -Y sign.

// maxKeyFile bounds a key file: an OpenSSH Ed25519 private key is about
// 400 bytes, a public key line about 100.
const maxKeyFile = 64 << 10

// ErrNotEd25519: a key of another type. Only Ed25519 keys sign locks.
var ErrNotEd25519 = errors.New("lock: only Ed25519 keys are supported")

// GenerateKey makes an Ed25519 key pair and returns the private key in
// OpenSSH format (unencrypted: keep the file 0600, or encrypt it with
// ssh-keygen -p) and the public key as an authorized_keys line.
func GenerateKey(comment string) (private, public []byte, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return nil, nil, err
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, nil, err
	}
	line := bytes.TrimSuffix(ssh.MarshalAuthorizedKey(sp), []byte("\n"))
	if comment != "" {
		line = append(append(line, ' '), comment...)
	}
	return pem.EncodeToMemory(block), append(line, '\n'), nil
}

// ParseSigningKey reads an OpenSSH Ed25519 private key. A key protected by
// a passphrase is refused with a hint: decrypt a copy for the signing step.
func ParseSigningKey(data []byte) (ssh.Signer, error) {
	if len(data) > maxKeyFile {
		return nil, errors.New("lock: the key file is too large to be a key")
	}
	s, err := ssh.ParsePrivateKey(data)
	var pe *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &pe):
		return nil, errors.New("lock: the key is protected by a passphrase; sign with an unencrypted copy (ssh-keygen -p -N '' -f COPY)")
	case err != nil:
		return nil, errors.New("lock: not an OpenSSH private key")
	}
	if s.PublicKey().Type() != ssh.KeyAlgoED25519 {
		return nil, ErrNotEd25519
	}
	return s, nil
}

// ParsePublicKey reads one Ed25519 public key in authorized_keys form
// ("ssh-ed25519 AAAA... [comment]"); options before the key type are not
// accepted.
func ParsePublicKey(line string) (ssh.PublicKey, error) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, ssh.KeyAlgoED25519+" ") {
		return nil, ErrNotEd25519
	}
	k, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil || len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("lock: not one public key in authorized_keys form")
	}
	if k.Type() != ssh.KeyAlgoED25519 {
		return nil, ErrNotEd25519
	}
	return k, nil
}

// KeyString is a public key's canonical text: "ssh-ed25519 AAAA...".
func KeyString(k ssh.PublicKey) string {
	return strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(k)), "\n")
}

// Fingerprint is a public key's SHA-256 fingerprint as ssh-keygen -l
// prints it ("SHA256:...").
func Fingerprint(k ssh.PublicKey) string { return ssh.FingerprintSHA256(k) }

func sameKey(a, b ssh.PublicKey) bool { return bytes.Equal(a.Marshal(), b.Marshal()) }

func describeKey(k ssh.PublicKey) string { return fmt.Sprintf("%s key %s", k.Type(), Fingerprint(k)) }
