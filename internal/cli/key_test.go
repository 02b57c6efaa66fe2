package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// signingSetup makes a repository (with .git) holding a locked project,
// a host folder outside it with a key pair and a host config trusting it.
func signingSetup(t *testing.T) (p *lockProject, hostDir, key, hostConfig string) {
	t.Helper()
	p = newLockProject(t)
	os.MkdirAll(filepath.Join(p.dir, ".git"), 0o755)
	p.addServer("weather", weatherScenario("Get the weather."), "")
	p.run("", "lock", "--approve", "--yes").wantCode(t, ExitOK)
	hostDir = t.TempDir()
	key = filepath.Join(hostDir, "signer")
	runPins(t, "", "key", "generate", "--out", key).wantCode(t, ExitOK).wantOut(t, "fingerprint: SHA256:")
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	hostConfig = filepath.Join(hostDir, "host.json")
	writeHostConfig(t, hostConfig, string(pub), filepath.Join(hostDir, "seq.json"))
	return p, hostDir, key, hostConfig
}

func writeHostConfig(t *testing.T, path, pub, seq string) {
	t.Helper()
	cfg := fmt.Sprintf(`{"format": "mcpseal-lock-host/1", "trusted_keys": [%q], "sequence_store": %q}`, strings.TrimSpace(pub), seq)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestKeyGenerateNeverOverwrites: an existing key is kept.
func TestKeyGenerateNeverOverwrites(t *testing.T) {
	t.Parallel()
	key := filepath.Join(t.TempDir(), "k")
	runPins(t, "", "key", "generate", "--out", key).wantCode(t, ExitOK)
	before, _ := os.ReadFile(key)
	runPins(t, "", "key", "generate", "--out", key).wantCode(t, ExitFailure).wantOut(t, "never overwrites")
	after, _ := os.ReadFile(key)
	if string(before) != string(after) {
		t.Fatal("the key changed")
	}
	if fi, _ := os.Stat(key); fi.Mode().Perm() != 0o600 {
		t.Errorf("private key mode %v", fi.Mode())
	}
}

// TestSignedManifestAcceptedThenTamperedRefused: sign, verify with the
// host config; then each attack is refused.
func TestSignedManifestAcceptedThenTamperedRefused(t *testing.T) {
	t.Parallel()
	p, hostDir, key, host := signingSetup(t)
	p.run("", "lock", "verify", "--host-config", host).wantCode(t, ExitFailure).wantOut(t, "not signed")
	p.run("", "lock", "sign", "--key", key).wantCode(t, ExitOK).wantOut(t, "sequence 1")
	p.run("", "lock", "verify", "--host-config", host).wantCode(t, ExitOK).wantOut(t, "signed: sequence 1")
	p.run("", "lock", "--check", "--host-config", host).wantCode(t, ExitOK)
	signed1, _ := os.ReadFile(p.lockPath)
	manifest1, _ := os.ReadFile(p.lockPath + ".manifest")

	// Approve-after-signing: the lock no longer matches its manifest.
	p.run("", "lock", "revoke", "weather", "get_weather").wantCode(t, ExitOK)
	p.run("", "lock", "verify", "--host-config", host).wantCode(t, ExitFailure).wantOut(t, "digest does not match")

	// Signed again (sequence 2) it is accepted; rolling back to 1 is not.
	p.run("", "lock", "sign", "--key", key).wantCode(t, ExitOK).wantOut(t, "sequence 2")
	p.run("", "lock", "verify", "--host-config", host).wantCode(t, ExitOK)
	os.WriteFile(p.lockPath, signed1, 0o644)
	os.WriteFile(p.lockPath+".manifest", manifest1, 0o644)
	p.run("", "lock", "verify", "--host-config", host).wantCode(t, ExitFailure).wantOut(t, "rollback")

	// A key the host does not trust.
	other := filepath.Join(hostDir, "other")
	runPins(t, "", "key", "generate", "--out", other).wantCode(t, ExitOK)
	p.run("", "lock", "sign", "--key", other, "--sequence", "10").wantCode(t, ExitOK)
	p.run("", "lock", "verify", "--host-config", host).wantCode(t, ExitFailure).wantOut(t, "does not trust")
	p.run("", "lock", "sign", "--key", key, "--sequence", "5").wantCode(t, ExitUsage)
}

// TestHostConfigInRepositoryRefused: a host config committed next to the
// lock would let the lock's writers choose the keys.
func TestHostConfigInRepositoryRefused(t *testing.T) {
	t.Parallel()
	p, hostDir, key, _ := signingSetup(t)
	pub, _ := os.ReadFile(key + ".pub")
	inRepo := filepath.Join(p.dir, "host.json")
	writeHostConfig(t, inRepo, string(pub), filepath.Join(hostDir, "seq.json"))
	p.run("", "lock", "sign", "--key", key).wantCode(t, ExitOK)
	p.run("", "lock", "verify", "--host-config", inRepo).wantCode(t, ExitFailure).wantOut(t, "outside the repository")
	outside := filepath.Join(hostDir, "h2.json")
	writeHostConfig(t, outside, string(pub), filepath.Join(p.dir, "seq.json"))
	p.run("", "lock", "verify", "--host-config", outside).wantCode(t, ExitFailure).wantOut(t, "sequence store")
}
