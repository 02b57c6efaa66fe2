package lock

import (
	"errors"

	"golang.org/x/crypto/ssh"

	"github.com/mcpseal/mcpseal/sshsig"
)

// The signature of a manifest is an SSH signature (package sshsig), so
//
//	ssh-keygen -Y verify -f allowed_signers -I signer -n mcpseal-lock -s sig < statement
//
// checks it too. Only Ed25519 keys and SHA-512 message hashes are accepted.

// SignatureNamespace separates mcpseal's signatures from every other use
// of the same key (git commits, files, ssh logins).
const SignatureNamespace = "mcpseal-lock"

var errBadSignature = errors.New("not an Ed25519 SSH signature of namespace " + SignatureNamespace)

// sshSign returns the armoured SSH signature of message by s.
func sshSign(s ssh.Signer, message []byte) (string, error) {
	return sshsig.Sign(s, SignatureNamespace, message)
}

// sshVerify checks an armoured SSH signature of message and returns the
// key that made it. It does not decide whether that key is trusted.
func sshVerify(armored string, message []byte) (ssh.PublicKey, error) {
	k, err := sshsig.Verify(armored, SignatureNamespace, message)
	if err != nil {
		return nil, errBadSignature
	}
	return k, nil
}
