package sshsig

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func newSigner(t *testing.T) (ssh.Signer, []byte) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "test")
	if err != nil {
		t.Fatal(err)
	}
	return s, pem.EncodeToMemory(block)
}

func TestSignVerify(t *testing.T) {
	t.Parallel()
	s, _ := newSigner(t)
	msg := []byte("hello\n")
	sig, err := Sign(s, "ns-a", msg)
	if err != nil {
		t.Fatal(err)
	}
	k, err := Verify(sig, "ns-a", msg)
	if err != nil || !bytes.Equal(k.Marshal(), s.PublicKey().Marshal()) {
		t.Fatalf("Verify = %v, %v", k, err)
	}
	if _, err := Verify(sig, "ns-b", msg); err != ErrBad {
		t.Errorf("other namespace: %v", err)
	}
	if _, err := Verify(sig, "ns-a", []byte("hello!\n")); err != ErrBad {
		t.Errorf("other message: %v", err)
	}
	if _, err := Verify(strings.Repeat("A", MaxSize+1), "ns-a", msg); err != ErrBad {
		t.Errorf("oversized: %v", err)
	}
}

// TestSSHKeygenInterop: ssh-keygen -Y verify accepts our signatures and we
// accept ssh-keygen's. ssh-keygen (openssh-client) is required: the
// release's documented check depends on it.
func TestSSHKeygenInterop(t *testing.T) {
	t.Parallel()
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Fatal("ssh-keygen is not on PATH (apt-get install openssh-client; scripts/test installs it as root)")
	}
	dir := t.TempDir()
	s, priv := newSigner(t)
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	msgFile := filepath.Join(dir, "msg")
	msg := []byte("SHA256SUMS line\n")
	if err := os.WriteFile(msgFile, msg, 0o600); err != nil {
		t.Fatal(err)
	}
	allowed := filepath.Join(dir, "allowed_signers")
	line := "release " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey()))) + "\n"
	if err := os.WriteFile(allowed, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}

	ours, err := Sign(s, "ns-test", msg)
	if err != nil {
		t.Fatal(err)
	}
	sigFile := filepath.Join(dir, "ours.sig")
	if err := os.WriteFile(sigFile, []byte(ours), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(keygen, "-Y", "verify", "-f", allowed, "-I", "release", "-n", "ns-test", "-s", sigFile)
	cmd.Stdin = bytes.NewReader(msg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y verify refused our signature: %v\n%s", err, out)
	}
	cmd = exec.Command(keygen, "-Y", "verify", "-f", allowed, "-I", "release", "-n", "ns-other", "-s", sigFile)
	cmd.Stdin = bytes.NewReader(msg)
	if err := cmd.Run(); err == nil {
		t.Error("ssh-keygen accepted our signature for another namespace")
	}

	cmd = exec.Command(keygen, "-Y", "sign", "-f", keyFile, "-n", "ns-test", msgFile)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v\n%s", err, out)
	}
	theirs, err := os.ReadFile(msgFile + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(string(theirs), "ns-test", msg); err != nil {
		t.Errorf("ssh-keygen's signature: %v", err)
	}
}

func FuzzVerify(f *testing.F) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	s, _ := ssh.NewSignerFromKey(priv)
	good, _ := Sign(s, "fuzz", []byte("m"))
	f.Add(good)
	f.Add("-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, armored string) {
		k, err := Verify(armored, "fuzz", []byte("m"))
		if err == nil && k.Type() != ssh.KeyAlgoED25519 {
			t.Fatalf("accepted a %s key", k.Type())
		}
	})
}
