package site

import (
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/tlog"
)

// maxFeedEntries bounds the Atom feed: the latest changes only.
const maxFeedEntries = 100

type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Title   string      `xml:"title"`
	ID      string      `xml:"id"`
	Updated string      `xml:"updated"`
	Link    []atomLink  `xml:"link"`
	Author  atomAuthor  `xml:"author"`
	Entries []atomEntry `xml:"entry"`
}

type atomLink struct {
	Href string `xml:"href,attr"`
	Rel  string `xml:"rel,attr,omitempty"`
}

type atomAuthor struct {
	Name string `xml:"name"`
}

type atomEntry struct {
	Title   string   `xml:"title"`
	ID      string   `xml:"id"`
	Updated string   `xml:"updated"`
	Link    atomLink `xml:"link"`
	Summary string   `xml:"summary"`
}

// buildFeed returns the Atom feed of the latest entries, newest first.
// Entries carry the server's identity, counts and label codes, never a
// server's own text. Links are relative to baseURL ("" for relative
// links).
func buildFeed(origin string, servers []*server, baseURL string, now time.Time) ([]byte, error) {
	type item struct {
		s *server
		v *version
	}
	var items []item
	for _, s := range servers {
		for _, v := range s.Versions {
			items = append(items, item{s, v})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].v.Index > items[j].v.Index })
	if len(items) > maxFeedEntries {
		items = items[:maxFeedEntries]
	}
	f := atomFeed{
		Title: "MCP server contract changes: " + origin, ID: "urn:mcpseal-log:" + origin,
		Updated: now.UTC().Format(time.RFC3339), Author: atomAuthor{Name: "mcpseal crawler"},
		Link: []atomLink{{Href: baseURL + "feed.xml", Rel: "self"}, {Href: baseURL + "index.html"}},
	}
	if len(items) > 0 {
		f.Updated = items[0].v.Entry.Observed.UTC().Format(time.RFC3339)
	}
	for _, it := range items {
		e := it.v.Entry
		title := it.s.ID + " changed"
		if it.v.N == 1 {
			title = it.s.ID + " first seen"
		}
		f.Entries = append(f.Entries, atomEntry{
			Title:   title,
			ID:      "urn:sha256:" + hex.EncodeToString(leafOf(it.v)),
			Updated: e.Observed.UTC().Format(time.RFC3339),
			Link:    atomLink{Href: fmt.Sprintf("%sservers/%s.html#v%d", baseURL, it.s.Slug, it.v.N)},
			Summary: summary(it.v),
		})
	}
	b, err := xml.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

func leafOf(v *version) []byte {
	b, _ := v.Entry.Marshal()
	h := tlog.RecordHash(b)
	return h[:]
}

// summary says what changed with counts and label codes only.
func summary(v *version) string {
	c := v.Counts
	s := fmt.Sprintf("%d tools, %d prompts, %d resources, %d resource templates; contract %s",
		c["tools"], c["prompts"], c["resources"], c["resourceTemplates"], v.Entry.Digests.Contract[:16])
	if v.N == 1 {
		return s
	}
	counts := map[string]int{}
	var codes []string
	for _, ch := range v.Changes {
		for _, code := range ch.Codes {
			if counts[code] == 0 {
				codes = append(codes, code)
			}
			counts[code]++
		}
	}
	var parts []string
	for _, code := range codes {
		parts = append(parts, fmt.Sprintf("%s ×%d", code, counts[code]))
	}
	return fmt.Sprintf("%d definitions changed (%s); %s", len(v.Changes), strings.Join(parts, ", "), s)
}
