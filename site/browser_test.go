package site

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// This test renders the fixture site in a real browser: Debian's headless
// Chromium, installed by .ci/run. A missing Chromium fails the test; it
// never skips.

// chromiumFlags are the flags this machine's Chromium needs as root, with
// the network closed (see the machine notes): no sandbox, no GPU, and no
// background connections.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-dev-shm-usage",
}

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("Chromium is not installed: the browser test needs Debian's chromium package (apt-get install -y chromium); .ci/run installs it")
	return ""
}

// browse runs Chromium on url with one more flag (--dump-dom or
// --screenshot=FILE) and returns what it printed.
func browse(t *testing.T, bin, url string, flag string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir(), flag, url)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s %s: %v\n%s", flag, url, err, errb.String())
	}
	return out.String()
}

func TestSiteRendersInChromium(t *testing.T) {
	bin := chromium(t)
	out, _ := buildFixture(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(out)))
	defer srv.Close()

	index := browse(t, bin, srv.URL+"/index.html", "--dump-dom")
	for _, want := range []string{"MCP server contracts", "npm:weather-mcp", "npm:@acme/files-mcp", "local:internal-docs", "unchanged 8d", "last checked 31 Aug"} {
		if !strings.Contains(index, want) {
			t.Errorf("the rendered index lacks %q", want)
		}
	}
	page := browse(t, bin, srv.URL+"/servers/"+slug("npm:weather-mcp")+".html", "--dump-dom")
	for _, want := range []string{"Version 2: 2 Sep 2026", "Changes since version 1", "mentions-secrets", "new-field", "+++ observed/get_weather"} {
		if !strings.Contains(page, want) {
			t.Errorf("the rendered server page lacks %q", want)
		}
	}
	odd := browse(t, bin, srv.URL+"/servers/"+slug("npm:@acme/files-mcp")+".html", "--dump-dom")
	if strings.Contains(odd, "<script>alert") || !strings.Contains(odd, `\u{200b}`) {
		t.Error("the rendered page runs or hides a server's text")
	}
	// Chromium parses an SVG as XML and shows a parse error page for
	// anything malformed.
	badge := browse(t, bin, srv.URL+"/badges/"+slug("npm:weather-mcp")+".svg", "--dump-dom")
	if !strings.Contains(badge, "<svg") || !strings.Contains(badge, "unchanged 8d") || strings.Contains(badge, "error on line") {
		t.Errorf("the badge does not render as SVG:\n%s", badge)
	}
	shot := filepath.Join(t.TempDir(), "index.png")
	browse(t, bin, srv.URL+"/index.html", "--screenshot="+shot)
	png, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) || len(png) < 2000 {
		t.Fatalf("no screenshot of the index: %v (%d bytes)", err, len(png))
	}
	if dir := os.Getenv("MCPSEAL_SCREENSHOTS"); dir != "" {
		os.WriteFile(filepath.Join(dir, "site-index.png"), png, 0o644)
	}
}
