package lock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// hostLayout writes a host config whose files sit where the test says,
// relative to a temp root holding a repository "repo" with the lock.
func hostLayout(t *testing.T, gitEntry func(repo string), config, keyFile, seq string) (lockPath string, err error) {
	t.Helper()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	os.MkdirAll(filepath.Join(repo, "sub"), 0o755)
	os.MkdirAll(filepath.Join(root, "host"), 0o755)
	if gitEntry != nil {
		gitEntry(repo)
	}
	lockPath = filepath.Join(repo, "sub", FileName)
	if err := sampleLock(t).Write(lockPath); err != nil {
		t.Fatal(err)
	}
	k := newKey(t)
	at := func(p string) string { return filepath.Join(root, p) }
	os.MkdirAll(filepath.Dir(at(keyFile)), 0o755)
	os.WriteFile(at(keyFile), []byte(KeyString(k.PublicKey())), 0o644)
	os.MkdirAll(filepath.Dir(at(config)), 0o755)
	cfg := fmt.Sprintf(`{"format": %q, "trusted_key_files": [%q], "sequence_store": %q}`, HostConfigFormat, at(keyFile), at(seq))
	os.WriteFile(at(config), []byte(cfg), 0o600)
	h, err := LoadHostConfig(at(config))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := Sign(mustRead(t, lockPath), 1, time.Now(), k)
	WriteManifest(lockPath, m)
	_, err = Load(lockPath, h)
	return lockPath, err
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gitDir(repo string) { os.MkdirAll(filepath.Join(repo, ".git"), 0o755) }

// TestHostFilesInsideRepositoryRefused: whoever writes the lock must not
// choose the keys it is checked with or reset the sequence.
func TestHostFilesInsideRepositoryRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name             string
		git              func(string)
		config, key, seq string
		refused          bool
	}{
		{"all outside", gitDir, "host/h.json", "host/k.pub", "host/seq.json", false},
		{"config inside", gitDir, "repo/h.json", "host/k.pub", "host/seq.json", true},
		{"key inside", gitDir, "host/h.json", "repo/.mcp/k.pub", "host/seq.json", true},
		{"sequence store inside", gitDir, "host/h.json", "host/k.pub", "repo/sub/seq.json", true},
		{"sequence store in .git", gitDir, "host/h.json", "host/k.pub", "repo/.git/seq.json", true},
		{"worktree .git file", func(r string) {
			os.WriteFile(filepath.Join(r, ".git"), []byte("gitdir: /elsewhere/.git/worktrees/x\n"), 0o644)
		}, "repo/h.json", "host/k.pub", "host/seq.json", true},
		{"no .git: lock folder protected", nil, "repo/sub/h.json", "host/k.pub", "host/seq.json", true},
		{"no .git: sibling accepted", nil, "repo/h.json", "host/k.pub", "host/seq.json", false},
	} {
		_, err := hostLayout(t, c.git, c.config, c.key, c.seq)
		if got := errors.Is(err, ErrInsideRepository); got != c.refused {
			t.Errorf("%s: err %v, want refused=%v", c.name, err, c.refused)
		}
		if !c.refused && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestSubmoduleSearchesSuperproject: a lock in a submodule is in the
// superproject's repository too.
func TestSubmoduleSearchesSuperproject(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	super := filepath.Join(root, "super")
	sub := filepath.Join(super, "vendor", "tools")
	os.MkdirAll(filepath.Join(super, ".git"), 0o755)
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(sub, ".git"), []byte("gitdir: ../../.git/modules/tools\n"), 0o644)
	got, err := RepositoryRoot(sub)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(super)
	if got != want {
		t.Errorf("root %s, want %s", got, want)
	}
}

// TestSymlinkIntoRepositoryRefused: a host path outside that is a symlink
// into the repository, or a ".." that climbs back in, is judged where it
// lands.
func TestSymlinkIntoRepositoryRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	os.MkdirAll(filepath.Join(repo, "keys"), 0o755)
	os.MkdirAll(filepath.Join(root, "host"), 0o755)
	os.Symlink(filepath.Join(repo, "keys"), filepath.Join(root, "host", "keys"))
	os.WriteFile(filepath.Join(repo, "keys", "k.pub"), []byte("x"), 0o644)
	os.Symlink(filepath.Join(repo, "keys", "k.pub"), filepath.Join(root, "host", "k.pub"))
	rootDir, _ := RepositoryRoot(repo)
	for _, p := range []string{
		filepath.Join(root, "host", "keys", "k.pub"),
		filepath.Join(root, "host", "k.pub"),
		filepath.Join(root, "host", "keys", "..", "keys", "new.json"),
		root + "/host/../repo/seq.json",
	} {
		if err := checkOutside(rootDir, p, "file"); !errors.Is(err, ErrInsideRepository) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if err := checkOutside(rootDir, filepath.Join(root, "host", "nope", "seq.json"), "file"); err == nil || errors.Is(err, ErrInsideRepository) {
		t.Errorf("a folder that does not exist: %v", err)
	}
}

// TestHostConfigNeedsSequenceStoreAndKeys: a host config that cannot
// detect a rollback, or trusts nobody, is refused.
func TestHostConfigNeedsSequenceStoreAndKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k := KeyString(newKey(t).PublicKey())
	for name, cfg := range map[string]string{
		"no store":       fmt.Sprintf(`{"format": %q, "trusted_keys": [%q]}`, HostConfigFormat, k),
		"relative store": fmt.Sprintf(`{"format": %q, "trusted_keys": [%q], "sequence_store": "seq.json"}`, HostConfigFormat, k),
		"no keys":        fmt.Sprintf(`{"format": %q, "trusted_keys": [], "sequence_store": "/tmp/seq.json"}`, HostConfigFormat),
		"bad key":        fmt.Sprintf(`{"format": %q, "trusted_keys": ["ssh-ed25519 AAAA"], "sequence_store": "/tmp/seq.json"}`, HostConfigFormat),
		"unknown member": fmt.Sprintf(`{"format": %q, "trusted_keys": [%q], "sequence_store": "/tmp/s", "allow_unsigned": true}`, HostConfigFormat, k),
		"no format":      fmt.Sprintf(`{"trusted_keys": [%q], "sequence_store": "/tmp/s"}`, k),
	} {
		p := filepath.Join(dir, "h.json")
		os.WriteFile(p, []byte(cfg), 0o600)
		if _, err := LoadHostConfig(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
