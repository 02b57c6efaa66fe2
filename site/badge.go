package site

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/tlog"
)

// Badges state time facts only. They never say "safe", "verified" or
// anything else the log cannot know: a server that has not changed in 91
// days may have been hostile for all 91.
//
//	last checked 4 Sep    the crawler has not read the server's contract for
//	                      more than three days: no count keeps growing while
//	                      nobody looks
//	first seen today      the server's first entry is from today
//	changed today         the latest entry is from today
//	changed since 4 Sep   the latest entry is from today, but the crawler had
//	                      not seen the server for more than three days before
//	                      it: the change happened some time after 4 Sep
//	unchanged 91d         the latest entry is 91 calendar days old (UTC)

// staleAfter is how long the crawler may be away before a badge stops
// counting and states when it last checked.
const staleAfter = 72 * time.Hour

// Badge kinds, which pick the badge's colour.
const (
	badgeUnchanged = "unchanged"
	badgeChanged   = "changed"
	badgeStale     = "stale"
	badgeNew       = "new"
)

// A BadgeState is what a server's badge says.
type BadgeState struct {
	Text string
	Kind string
}

// BadgeFor returns the badge of a server whose latest entry is latest
// (first: it is the server's only entry), given what the crawler last
// recorded (nil if nothing) and the time now.
func BadgeFor(latest *tlog.Entry, first bool, live *tlog.ServerLiveness, now time.Time) BadgeState {
	lastOK := latest.Observed
	if live != nil && live.Seen != nil && live.Seen.After(lastOK) {
		lastOK = *live.Seen
	}
	if now.Sub(lastOK) > staleAfter {
		return BadgeState{Text: "last checked " + shortDate(lastOK, now), Kind: badgeStale}
	}
	days := calendarDays(latest.Observed, now)
	switch {
	case days > 0:
		return BadgeState{Text: fmt.Sprintf("unchanged %dd", days), Kind: badgeUnchanged}
	case first:
		return BadgeState{Text: "first seen today", Kind: badgeNew}
	case latest.Observed.Sub(latest.Since) > staleAfter:
		return BadgeState{Text: "changed since " + shortDate(latest.Since, now), Kind: badgeChanged}
	}
	return BadgeState{Text: "changed today", Kind: badgeChanged}
}

// calendarDays counts UTC midnights between from and to.
func calendarDays(from, to time.Time) int {
	f := from.UTC().Truncate(24 * time.Hour)
	t := to.UTC().Truncate(24 * time.Hour)
	if t.Before(f) {
		return 0
	}
	return int(t.Sub(f) / (24 * time.Hour))
}

// shortDate is "4 Sep", or "4 Sep 2025" outside now's year.
func shortDate(t, now time.Time) string {
	t = t.UTC()
	if t.Year() != now.UTC().Year() {
		return t.Format("2 Jan 2006")
	}
	return t.Format("2 Jan")
}

var badgeColors = map[string]string{
	badgeUnchanged: "#2e7d32",
	badgeChanged:   "#c62828",
	badgeStale:     "#757575",
	badgeNew:       "#1565c0",
}

// BadgeSVG draws a badge: "mcpseal" on grey, the state's text on its
// colour. Widths are estimated (7 px a character), which every renderer
// shows legibly.
func BadgeSVG(b BadgeState) []byte {
	const label = "mcpseal"
	lw := 10 + 7*len(label)
	rw := 10 + 7*len(b.Text)
	text := xmlEscape(b.Text)
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s: %s">`, lw+rw, label, text)
	fmt.Fprintf(&s, `<title>%s: %s</title>`, label, text)
	fmt.Fprintf(&s, `<rect width="%d" height="20" fill="#555"/>`, lw)
	fmt.Fprintf(&s, `<rect x="%d" width="%d" height="20" fill="%s"/>`, lw, rw, badgeColors[b.Kind])
	fmt.Fprintf(&s, `<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">`)
	fmt.Fprintf(&s, `<text x="%d" y="14">%s</text><text x="%d" y="14">%s</text></g></svg>`, 5, label, lw+5, text)
	s.WriteString("\n")
	return []byte(s.String())
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(s)
}
