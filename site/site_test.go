package site

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/tlog"
	"github.com/mcpseal/mcpseal/tlog/tlogtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/site")

// buildFixture builds the fixture log's site into a new folder.
func buildFixture(t *testing.T) (string, *tlogtest.Fixture) {
	t.Helper()
	f := tlogtest.Build(t)
	d, err := tlog.OpenDir(f.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	live, err := tlog.ReadLiveness(d)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "site")
	opts := Options{Now: tlogtest.Now, Key: f.Key, VerifierKey: f.VKey, BaseURL: "https://contracts.example/"}
	if err := Build(f.Verified, d, live, out, opts); err != nil {
		t.Fatal(err)
	}
	return out, f
}

var goldenFiles = []string{
	"index.html",
	"servers/npm-weather-mcp-" + "SLUG.html",
	"feed.xml",
	"reports/2026-09.json",
	"reports/2026-09.html",
	"verify.html",
}

func TestSiteGolden(t *testing.T) {
	out, _ := buildFixture(t)
	files := append([]string{}, goldenFiles...)
	files[1] = "servers/" + slug("npm:weather-mcp") + ".html"
	files = append(files, "servers/"+slug("npm:@acme/files-mcp")+".html", "badges/"+slug("npm:weather-mcp")+".svg")
	for _, name := range files {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("..", "testdata", "site", "golden", filepath.FromSlash(name))
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./site -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its golden file %s", name, golden)
		}
	}
}

func TestBadgeTextForEachTimeState(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 10, 15, 0, 0, 0, time.UTC)
	at := func(m time.Month, d, h int) time.Time { return time.Date(2026, m, d, h, 0, 0, 0, time.UTC) }
	seen := func(x time.Time) *tlog.ServerLiveness { return &tlog.ServerLiveness{Checked: x, Seen: &x} }
	for _, c := range []struct {
		name       string
		observed   time.Time
		since      time.Time
		first      bool
		live       *tlog.ServerLiveness
		want, kind string
	}{
		{"unchanged for days", at(6, 11, 9), at(6, 1, 9), false, seen(now), "unchanged 91d", badgeUnchanged},
		{"unchanged since yesterday evening", at(9, 9, 23), at(9, 9, 20), false, seen(now), "unchanged 1d", badgeUnchanged},
		{"changed today", at(9, 10, 9), at(9, 10, 3), false, seen(now), "changed today", badgeChanged},
		{"first seen today", at(9, 10, 9), time.Time{}, true, seen(now), "first seen today", badgeNew},
		{"changed after an outage", at(9, 10, 9), at(9, 4, 9), false, seen(now), "changed since 4 Sep", badgeChanged},
		{"crawler away: no growing count", at(6, 11, 9), at(6, 1, 9), false, seen(at(9, 4, 9)), "last checked 4 Sep", badgeStale},
		{"crawler away, no liveness record", at(9, 4, 9), time.Time{}, true, nil, "last checked 4 Sep", badgeStale},
		{"crawler away since last year", at(12, 30, 9).AddDate(-1, 0, 0), time.Time{}, true, nil, "last checked 30 Dec 2025", badgeStale},
		{"failed check does not count as a check", at(6, 11, 9), at(6, 1, 9), false, &tlog.ServerLiveness{Checked: now, Failure: "timeout", Seen: ptrTime(at(9, 1, 0))}, "last checked 1 Sep", badgeStale},
	} {
		e := &tlog.Entry{Observed: c.observed, Since: c.since}
		b := BadgeFor(e, c.first, c.live, now)
		if b.Text != c.want || b.Kind != c.kind {
			t.Errorf("%s: %q (%s), want %q (%s)", c.name, b.Text, b.Kind, c.want, c.kind)
		}
		if strings.Contains(strings.ToLower(b.Text), "safe") {
			t.Errorf("%s: a badge claims safety", c.name)
		}
		var doc struct {
			XMLName xml.Name
			Title   string `xml:"title"`
		}
		if err := xml.Unmarshal(BadgeSVG(b), &doc); err != nil || doc.XMLName.Local != "svg" || doc.XMLName.Space != "http://www.w3.org/2000/svg" || doc.Title != "mcpseal: "+c.want {
			t.Errorf("%s: not a valid SVG badge: %v %+v", c.name, err, doc)
		}
	}
}

func ptrTime(t time.Time) *time.Time { return &t }

func TestSiteEscapesServerText(t *testing.T) {
	out, _ := buildFixture(t)
	page, err := os.ReadFile(filepath.Join(out, "servers", slug("npm:@acme/files-mcp")+".html"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(page, []byte("<script>alert")) || !bytes.Contains(page, []byte(`odd&lt;script&gt;alert(1)&lt;/script&gt;\u{200b}name`)) {
		t.Fatal("a server's tool name reached the page unescaped, or its invisible character hidden")
	}
}

// The feed, the badges and the reports go where nobody reviews them
// (readers, READMEs, dashboards): they carry no server text.
func TestFeedBadgesAndReportsCarryNoServerText(t *testing.T) {
	out, _ := buildFixture(t)
	var files []string
	for _, g := range []string{"feed.xml", "badges/*.svg", "reports/*.json", "reports/*.html"} {
		m, _ := filepath.Glob(filepath.Join(out, g))
		files = append(files, m...)
	}
	if len(files) < 6 {
		t.Fatalf("only %d files", len(files))
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, m := range append(tlogtest.Markers, "get_weather", "odd", "search_docs") {
			if bytes.Contains(b, []byte(m)) {
				t.Errorf("%s contains server text %q", f, m)
			}
		}
	}
}

func TestPublishedLogVerifies(t *testing.T) {
	out, f := buildFixture(t)
	d, err := tlog.OpenDir(filepath.Join(out, "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	v, err := tlog.Verify(d, tlog.VerifyOptions{Key: f.Key})
	if err != nil || v.Checkpoint.Size != 5 {
		t.Fatalf("published log: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "log.tar.gz")); err != nil {
		t.Fatal(err)
	}
	pub, _ := os.ReadFile(filepath.Join(out, "log.pub"))
	if strings.TrimSpace(string(pub)) != f.VKey {
		t.Fatal("log.pub is not the verifier key")
	}
}

func TestBuildRefusesNonEmptyOutput(t *testing.T) {
	f := tlogtest.Build(t)
	d, _ := tlog.OpenDir(f.Dir)
	defer d.Close()
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "keep.txt"), []byte("x"), 0o644)
	if err := Build(f.Verified, d, tlogtest.Liveness(), out, Options{Now: tlogtest.Now, Key: f.Key}); err == nil {
		t.Fatal("built into a folder that holds other files")
	}
}
