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
