package site

import (
	"sort"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/tlog"
)

// reportVersion is the version of the monthly report JSON.
const reportVersion = 1

// A Report counts one month's changes by label. Labels come from fixed
// rules, so the report gives totals only and never ties a label to a
// server.
type Report struct {
	Version int    `json:"version"`
	Month   string `json:"month"` // YYYY-MM
	Log     struct {
		Origin string    `json:"origin"`
		Size   int64     `json:"size"`
		Root   tlog.Hash `json:"root"`
	} `json:"log"`
	// Entries is the number of log entries observed in the month.
	Entries int `json:"entries"`
	// NewServers had their first entry in the month; ChangedServers had
	// at least one later entry (a contract change) in it.
	NewServers     int `json:"newServers"`
	ChangedServers int `json:"changedServers"`
	// Changes counts changed definitions (and instructions) across the
	// month's change entries; Labels counts them by label code (every code
	// is present).
	Changes int            `json:"changes"`
	Labels  map[string]int `json:"labels"`
	// AfterOutage counts changes first found after the crawler had been
	// away more than three days: they are dated by their window, not by
	// the day they were found.
	AfterOutage int `json:"afterOutage"`
	// Tracked is the number of servers with an entry by the month's end.
	Tracked int `json:"tracked"`
}

// buildReports returns one report per month that has entries, oldest
// first.
func buildReports(v *tlog.Verified, servers []*server) []*Report {
	byMonth := map[string]*Report{}
	changed := map[string]map[string]bool{}
	firstMonth := map[string]string{}
	for _, s := range servers {
		for _, ver := range s.Versions {
			m := ver.Entry.Observed.UTC().Format("2006-01")
			r := byMonth[m]
			if r == nil {
				r = newReport(v, m)
				byMonth[m] = r
				changed[m] = map[string]bool{}
			}
			r.Entries++
			if ver.N == 1 {
				r.NewServers++
				firstMonth[s.ID] = m
				continue
			}
			changed[m][s.ID] = true
			if ver.Window {
				r.AfterOutage++
			}
			for _, ch := range ver.Changes {
				r.Changes++
				for _, c := range ch.Codes {
					r.Labels[c]++
				}
			}
		}
	}
	var months []string
	for m, r := range byMonth {
		r.ChangedServers = len(changed[m])
		months = append(months, m)
	}
	sort.Strings(months)
	out := make([]*Report, 0, len(months))
	for _, m := range months {
		r := byMonth[m]
		for _, fm := range firstMonth {
			if fm <= m {
				r.Tracked++
			}
		}
		out = append(out, r)
	}
	return out
}

func newReport(v *tlog.Verified, month string) *Report {
	r := &Report{Version: reportVersion, Month: month, Labels: map[string]int{}}
	r.Log.Origin, r.Log.Size, r.Log.Root = v.Checkpoint.Origin, v.Checkpoint.Size, v.Checkpoint.Root
	for _, c := range contract.LabelCodes {
		r.Labels[c] = 0
	}
	return r
}

// LabelRow is one line of a report page.
type labelRow struct {
	Code  string
	Count int
}

func (r *Report) Rows() []labelRow {
	rows := make([]labelRow, 0, len(contract.LabelCodes))
	for _, c := range contract.LabelCodes {
		rows = append(rows, labelRow{Code: c, Count: r.Labels[c]})
	}
	return rows
}

// monthTitle is "September 2026" for "2026-09".
func monthTitle(m string) string {
	t, err := time.Parse("2006-01", m)
	if err != nil {
		return m
	}
	return t.Format("January 2006")
}
