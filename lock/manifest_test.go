package lock

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

func newKey(t testing.TB) ssh.Signer {
	t.Helper()
	priv, _, err := GenerateKey("test")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSigningKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signedRepo is a repository with a lock, and a host folder outside it.
type signedRepo struct {
	repo, lockPath, hostDir string
	data                    []byte
}

func newSignedRepo(t *testing.T) *signedRepo {
	t.Helper()
	root := t.TempDir()
	r := &signedRepo{repo: filepath.Join(root, "repo"), hostDir: filepath.Join(root, "host")}
	for _, d := range []string{filepath.Join(r.repo, ".git"), r.hostDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.lockPath = filepath.Join(r.repo, FileName)
	if err := sampleLock(t).Write(r.lockPath); err != nil {
		t.Fatal(err)
	}
	r.data, _ = os.ReadFile(r.lockPath)
	return r
}

func (r *signedRepo) sign(t *testing.T, s ssh.Signer, seq uint64) {
	t.Helper()
	m, err := Sign(r.data, seq, time.Now(), s)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteManifest(r.lockPath, m); err != nil {
		t.Fatal(err)
	}
}

func (r *signedRepo) host(t *testing.T, keys ...ssh.Signer) *HostConfig {
	t.Helper()
	var lines []string
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%q", KeyString(k.PublicKey())))
	}
	path := filepath.Join(r.hostDir, "host.json")
	cfg := fmt.Sprintf(`{"format": %q, "trusted_keys": [%s], "sequence_store": %q}`, HostConfigFormat, strings.Join(lines, ","), filepath.Join(r.hostDir, "seq.json"))
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := LoadHostConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSignedManifestAccepted: a lock signed by a trusted key loads.
func TestSignedManifestAccepted(t *testing.T) {
	t.Parallel()
	r := newSignedRepo(t)
	k := newKey(t)
	r.sign(t, k, 1)
	if _, err := Load(r.lockPath, r.host(t, k)); err != nil {
		t.Fatal(err)
	}
}

// TestUnsignedLockRefused: with a host config, a lock without a manifest
// does not load.
func TestUnsignedLockRefused(t *testing.T) {
	t.Parallel()
	r := newSignedRepo(t)
	if _, err := Load(r.lockPath, r.host(t, newKey(t))); !errors.Is(err, ErrUnsigned) {
		t.Fatalf("got %v", err)
	}
}

// TestLockEditedAfterSigningRefused: the lock changed after it was signed
// (a definition approved in a later commit that nobody signed).
func TestLockEditedAfterSigningRefused(t *testing.T) {
	t.Parallel()
	r := newSignedRepo(t)
	k := newKey(t)
	r.sign(t, k, 1)
	l, _, err := ReadFile(r.lockPath)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := l.Entry("files")
	w, _ := e.Lookup("tools", "write_file")
	a := testApproval
	a.Digest = w.Digest
	if err := e.Approve("tools", "write_file", a); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(r.lockPath); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(r.lockPath, r.host(t, k)); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("got %v", err)
	}
}

// TestUntrustedKeyRefused: a valid signature by a key the host does not
// trust (the lock's writer signed it themselves).
func TestUntrustedKeyRefused(t *testing.T) {
	t.Parallel()
	r := newSignedRepo(t)
	r.sign(t, newKey(t), 1)
	if _, err := Load(r.lockPath, r.host(t, newKey(t))); !errors.Is(err, ErrUntrustedKey) {
		t.Fatalf("got %v", err)
	}
}

// TestManifestEditedRefused: raising the sequence or swapping the key
// member breaks the signature.
func TestManifestEditedRefused(t *testing.T) {
	t.Parallel()
	r := newSignedRepo(t)
	k, other := newKey(t), newKey(t)
	r.sign(t, k, 1)
	p := r.lockPath + ManifestSuffix
	orig, _ := os.ReadFile(p)
	for name, e := range map[string][2]string{
		"sequence": {`"sequence": 1`, `"sequence": 99`},
		"key":      {KeyString(k.PublicKey()), KeyString(other.PublicKey())},
		"digest":   {LockDigest(r.data), "sha256:" + strings.Repeat("0", 64)},
	} {
		os.WriteFile(p, bytes.Replace(orig, []byte(e[0]), []byte(e[1]), 1), 0o644)
		if _, err := Load(r.lockPath, r.host(t, k, other)); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s edited: got %v", name, err)
		}
	}
}

// TestRollbackRefused: after sequence 2, the host refuses sequence 1 (an
// older signed lock with an approval since revoked).
func TestRollbackRefused(t *testing.T) {
	t.Parallel()
	r := newSignedRepo(t)
	k := newKey(t)
	h := r.host(t, k)
	oldData := r.data
	r.sign(t, k, 1)
	oldManifest, _ := os.ReadFile(r.lockPath + ManifestSuffix)
	if _, err := Load(r.lockPath, h); err != nil {
		t.Fatal(err)
	}
	// A newer lock: one approval revoked, signed as sequence 2.
	l, _, _ := ReadFile(r.lockPath)
	e, _ := l.Entry("files")
	if err := e.Revoke("tools", "read_file"); err != nil {
		t.Fatal(err)
	}
	l.Write(r.lockPath)
	r.data, _ = os.ReadFile(r.lockPath)
	r.sign(t, k, 2)
	if _, err := Load(r.lockPath, h); err != nil {
		t.Fatal(err)
	}
	// Roll back both files.
	os.WriteFile(r.lockPath, oldData, 0o644)
	os.WriteFile(r.lockPath+ManifestSuffix, oldManifest, 0o644)
	if _, err := Load(r.lockPath, h); !errors.Is(err, ErrRollback) {
		t.Fatalf("got %v", err)
	}
	// The same sequence number for another lock is refused too.
	r.data = oldData
	r.sign(t, k, 2)
	if _, err := Load(r.lockPath, h); !errors.Is(err, ErrRollback) {
		t.Fatalf("equal sequence, other lock: got %v", err)
	}
}

// TestConcurrentStartsKeepHighestSequence: servers starting at once
// update the sequence store without losing the highest number.
func TestConcurrentStartsKeepHighestSequence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(dir, "seq.json")
	var wg sync.WaitGroup
	for i := 1; i <= 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			m := &Manifest{Sequence: uint64(i), LockDigest: fmt.Sprintf("sha256:%064d", i)}
			_ = acceptSequence(store, "/x/mcpseal.lock", m)
		}(i)
	}
	wg.Wait()
	err := acceptSequence(store, "/x/mcpseal.lock", &Manifest{Sequence: 19, LockDigest: fmt.Sprintf("sha256:%064d", 19)})
	if !errors.Is(err, ErrRollback) {
		t.Fatalf("sequence 19 after 20: %v", err)
	}
}

// TestDamagedSequenceStoreRefused: a damaged store holds, rather than
// forgetting what the host has seen.
func TestDamagedSequenceStoreRefused(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "seq.json")
	os.WriteFile(store, []byte("{not json"), 0o600)
	if err := acceptSequence(store, "/x", &Manifest{Sequence: 1, LockDigest: "sha256:" + strings.Repeat("0", 64)}); err == nil {
		t.Fatal("accepted with a damaged store")
	}
}

// TestSSHKeygenVerifiesManifest is an interop test with OpenSSH: the
// signature is one ssh-keygen -Y verify accepts, and a key made by
// ssh-keygen signs.
func TestSSHKeygenVerifiesManifest(t *testing.T) {
	t.Parallel()
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen is not installed")
	}
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "id")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f", keyPath).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	priv, _ := os.ReadFile(keyPath)
	s, err := ParseSigningKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Sign([]byte("lock bytes"), 3, time.Now(), s)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "statement"), m.Statement(), 0o600)
	os.WriteFile(filepath.Join(dir, "sig"), []byte(m.Signature), 0o600)
	os.WriteFile(filepath.Join(dir, "allowed"), []byte("ci "+m.Key+"\n"), 0o600)
	cmd := exec.Command(keygen, "-Y", "verify", "-f", filepath.Join(dir, "allowed"), "-I", "ci", "-n", SignatureNamespace, "-s", filepath.Join(dir, "sig"))
	cmd.Stdin = bytes.NewReader(m.Statement())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y verify: %v: %s", err, out)
	}
	if err := m.Verify([]byte("lock bytes"), []ssh.PublicKey{s.PublicKey()}); err != nil {
		t.Fatal(err)
	}
}

// TestOnlyEd25519Keys: an RSA or ECDSA key does not sign locks.
func TestOnlyEd25519Keys(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQC0 x",
		"ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTY x",
		"command=\"evil\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJzhIArPrP45M0v2Ty/J/sjGnKR/dUgm76jgWGTMQrX9",
	} {
		if _, err := ParsePublicKey(line); err == nil {
			t.Errorf("accepted %q", line)
		}
	}
}
