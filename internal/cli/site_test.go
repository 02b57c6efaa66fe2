package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/tlog/tlogtest"
)

func TestSiteBuildCommand(t *testing.T) {
	t.Setenv("MCPSEAL_HOME", t.TempDir())
	f := tlogtest.Build(t)
	pub := f.WriteKey(t)
	out := filepath.Join(t.TempDir(), "site")
	stdout, errs, code := mcpseal(t, "site", "build", f.Dir, out, "--key", pub, "--now", "2026-09-10T15:00:00Z")
	if code != 0 || !strings.Contains(stdout, "5 entries, 3 servers") {
		t.Fatalf("%d %s %s", code, stdout, errs)
	}
	for _, p := range []string{"index.html", "feed.xml", "verify.html", "log.tar.gz", "log/checkpoint", "reports/2026-09.json"} {
		if _, err := os.Stat(filepath.Join(out, p)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSiteBuildRefusesTamperedLog(t *testing.T) {
	t.Setenv("MCPSEAL_HOME", t.TempDir())
	f := tlogtest.Build(t)
	pub := f.WriteKey(t)
	tile := filepath.Join(f.Dir, "tile", "entries", "000.p", "5")
	b, err := os.ReadFile(tile)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-3] ^= 1
	os.WriteFile(tile, b, 0o644)
	out := filepath.Join(t.TempDir(), "site")
	_, errs, code := mcpseal(t, "site", "build", f.Dir, out, "--key", pub)
	if code == 0 || !strings.Contains(errs, "no site was built") {
		t.Fatalf("%d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); err == nil {
		t.Fatal("a site was built from a tampered log")
	}
}

// TestLogInitAndSiteBuildDefaults: `log init DIR --pub-out FILE` names the
// log after the host and folder and says so; `site build LOGDIR OUT`
// verifies with the key of the log's own signing key in $MCPSEAL_HOME and
// says which; a log whose signing key is elsewhere still needs --key.
func TestLogInitAndSiteBuildDefaults(t *testing.T) {
	t.Setenv("MCPSEAL_HOME", t.TempDir())
	work := t.TempDir()
	dir, pub := filepath.Join(work, "my log!"), filepath.Join(work, "log.pub")
	out, errs, code := mcpseal(t, "log", "init", dir, "--pub-out", pub)
	host, _ := os.Hostname()
	origin := originPart(host) + "/my-log-"
	if code != 0 || !strings.Contains(out, "origin: "+origin+" (from the host and folder names") {
		t.Fatalf("init: %d %s %s", code, out, errs)
	}
	if out, _, code := mcpseal(t, "log", "append", dir, "--observation", writeObservation(t, "local:weather", "Get the weather.")); code != 0 {
		t.Fatalf("append: %d %s", code, out)
	}
	vkey, err := os.ReadFile(pub)
	if err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(t.TempDir(), "site")
	out, errs, code = mcpseal(t, "site", "build", dir, site)
	if code != 0 || !strings.Contains(out, "verifier key: "+strings.TrimSpace(string(vkey))) || !strings.Contains(out, "1 entries") {
		t.Fatalf("site build without --key: %d %s %s", code, out, errs)
	}

	f := tlogtest.Build(t) // signed by a key this home does not hold
	_, errs, code = mcpseal(t, "site", "build", f.Dir, filepath.Join(t.TempDir(), "site"))
	if code != ExitUsage || !strings.Contains(errs, "--key FILE") {
		t.Fatalf("someone else's log without --key: %d %s", code, errs)
	}
}

// TestLogInitOriginFromUnnameableFolder: a folder name with nothing an
// origin may hold asks for --origin rather than guessing.
func TestLogInitOriginFromUnnameableFolder(t *testing.T) {
	if _, err := defaultOrigin(filepath.Join(t.TempDir(), "___")); err == nil {
		t.Fatal("an empty folder part was accepted")
	}
}
