// Package site builds the static website of a transparency log of MCP
// server contracts: an index of servers, a page per server with its
// history and labelled diffs, SVG badges that state time facts only, an
// Atom feed of changes, monthly reports, and the log's files for download
// with instructions to verify them.
//
// The site needs no JavaScript. Every page is rendered with html/template
// from a log that verified first (tlog.Verify): nothing unverified is
// published. Server text (names, definitions, diffs) reaches only the
// pages people read, escaped by html/template and with invisible
// characters spelled out (contract.VisibleText); badges, the feed and the
// reports carry identities, dates, counts, digests and label codes only.
//
// Layout of the output folder:
//
//	index.html               every server, sorted by name, with A-Z jumps
//	servers/<slug>.html      one server: history, changes, labelled diffs
//	badges/<slug>.svg        the server's badge
//	feed.xml                 Atom feed of the latest entries
//	reports/index.html       the monthly reports
//	reports/<YYYY-MM>.json   one month's counts by label (and .html)
//	verify.html              how to download and verify the log
//	log/...                  the log folder's files, as verified
//	log.tar.gz               the same files in one archive
//
// <slug> is the server's identity reduced to [a-z0-9.-] and 8 hex of its
// SHA-256 (npm:@acme/files-mcp is npm--acme-files-mcp-1c2d3e4f).
package site

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/mcpseal/mcpseal/tlog"
)

// Options says how to build.
type Options struct {
	// Now is the time the badges count to.
	Now time.Time
	// BaseURL, when set, is the site's public address ending in "/": the
	// feed and the badge snippets use absolute links.
	BaseURL string
	// Key is the log's pinned verifier key: the published copy of the log
	// is verified with it. Required.
	Key note.Verifier
	// VerifierKey is the key's text, shown on verify.html and written to
	// log.pub.
	VerifierKey string
}

//go:embed templates/*.html
var templateFS embed.FS

// templates are parsed on first use: most mcpseal commands never build a
// site, and parsing them at start-up would delay every launch.
var templates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"date":         func(t time.Time) string { return t.UTC().Format("2 Jan 2006") },
		"datetime":     func(t time.Time) string { return t.UTC().Format("2 Jan 2006 15:04 UTC") },
		"short":        func(d string) string { return d[:16] },
		"dec":          func(n int) int { return n - 1 },
		"monthTitle":   monthTitle,
		"letterAnchor": func(string) string { return "" }, // replaced per build
	}).ParseFS(templateFS, "templates/*.html"))
})

// page is what every template gets.
type page struct {
	Title, Root, Origin, Base, VKey string
	Size                            int64
	RootHash                        tlog.Hash
	Servers                         []*server
	Letters                         []string
	Server                          *server
	Reports                         []*Report
	Report                          *Report
}

// Build writes the site of the verified log v (read from st, with the
// crawler's liveness record live) into out, which must not exist or be
// empty.
func Build(v *tlog.Verified, st tlog.Storage, live *tlog.Liveness, out string, opts Options) error {
	if opts.Key == nil {
		return errors.New("site: the log's verifier key is required")
	}
	if err := prepareOut(out); err != nil {
		return err
	}
	servers, err := buildModel(v, st, live, opts.Now)
	if err != nil {
		return err
	}
	base := opts.BaseURL
	if base == "" {
		base = "https://SITE-ADDRESS/"
	}
	p := page{Origin: v.Checkpoint.Origin, Size: v.Checkpoint.Size, RootHash: v.Checkpoint.Root,
		Base: base, VKey: opts.VerifierKey, Servers: servers}
	w := &writer{out: out}
	tmpl, letters := withLetters(servers)
	p.Letters = letters

	p.Title, p.Root = "MCP server contracts: "+p.Origin, ""
	w.render(tmpl, "index.html", "index.html", p)
	for _, s := range servers {
		sp := p
		sp.Title, sp.Root, sp.Server = s.ID+": contract history", "../", s
		w.render(tmpl, "server.html", "servers/"+s.Slug+".html", sp)
		w.write("badges/"+s.Slug+".svg", BadgeSVG(s.Badge))
	}
	feed, err := buildFeed(p.Origin, servers, opts.BaseURL, opts.Now)
	if err != nil {
		return err
	}
	w.write("feed.xml", feed)
	reports := buildReports(v, servers)
	rp := p
	rp.Title, rp.Root, rp.Reports = "Monthly reports", "../", reports
	w.render(tmpl, "reports.html", "reports/index.html", rp)
	for _, r := range reports {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		w.write("reports/"+r.Month+".json", append(b, '\n'))
		one := rp
		one.Title, one.Report = "Report for "+monthTitle(r.Month), r
		w.render(tmpl, "report.html", "reports/"+r.Month+".html", one)
	}
	p.Title = "Download and verify the log"
	w.render(tmpl, "verify.html", "verify.html", p)
	if w.err != nil {
		return w.err
	}
	return copyLog(v, st, out, opts)
}

// withLetters returns the templates with letterAnchor set to mark the
// first server of each leading character, and the characters.
func withLetters(servers []*server) (*template.Template, []string) {
	first := map[string]string{}
	var letters []string
	for _, s := range servers {
		l := strings.ToUpper(sortKey(s.ID)[:1])
		if _, ok := first[l]; !ok {
			first[l] = s.ID
			letters = append(letters, l)
		}
	}
	anchors := map[string]string{}
	for l, id := range first {
		anchors[id] = l
	}
	t := template.Must(templates().Clone())
	t.Funcs(template.FuncMap{"letterAnchor": func(id string) string { return anchors[id] }})
	return t, letters
}

func prepareOut(out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s is not empty; build the site into a new folder", out)
	}
	return nil
}

// writer writes files under out, keeping the first error.
type writer struct {
	out string
	err error
}

func (w *writer) write(name string, data []byte) {
	if w.err != nil {
		return
	}
	p := filepath.Join(w.out, filepath.FromSlash(name))
	if w.err = os.MkdirAll(filepath.Dir(p), 0o755); w.err == nil {
		w.err = tlog.WriteFileAtomic(p, data, 0o644)
	}
}

func (w *writer) render(t *template.Template, tmpl, name string, p page) {
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, tmpl, p); err != nil && w.err == nil {
		w.err = err
	}
	w.write(name, b.Bytes())
}
