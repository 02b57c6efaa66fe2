package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpseal/mcpseal/internal/pathclock"
)

// reportFormat versions the JSON report.
const reportFormat = "mcpseal-bench/1"

// report is the whole run, as printed and as JSON.
type report struct {
	Format      string       `json:"format"`
	Date        string       `json:"date"`
	Go          string       `json:"go"`
	CPUs        int          `json:"cpus"`
	LoadAvg     string       `json:"loadavg"`     // at the start: 1, 5 and 15 minutes
	LoadAvgEnd  string       `json:"loadavg_end"` // at the end
	Calls       int          `json:"calls"`
	Warmup      int          `json:"warmup"`
	Rounds      int          `json:"rounds"`
	Tools       int          `json:"tools"`
	CPUSource   string       `json:"cpu_source"` // the CPU figure the ratios use: "stat" or "sched"
	Profiling   bool         `json:"profiling"`
	Clocked     bool         `json:"pathclock"` // -pathclock: the stdio proxies timed their paths
	Generations []*genResult `json:"generations"`
	Targets     []target     `json:"targets"`
	Met         bool         `json:"met"`
	Notes       []string     `json:"notes,omitempty"`
}

// genResult is one protocol generation's paths.
type genResult struct {
	Protocol string        `json:"protocol"`
	Stdio    []*pathResult `json:"stdio,omitempty"`
	HTTP     []*pathResult `json:"http,omitempty"`
	Big      *bigResult    `json:"big,omitempty"`
}

// pathResult is one path's samples, one per alternation, and their summary.
type pathResult struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Proxy bool   `json:"proxy"` // a proxy process was measured

	RoundTripUS []num    `json:"round_trip_us"`
	CPUStatUS   []num    `json:"cpu_stat_us,omitempty"`  // per call, from utime+stime
	CPUSchedUS  []num    `json:"cpu_sched_us,omitempty"` // per call, from schedstat
	CPUTicks    []uint64 `json:"cpu_ticks,omitempty"`    // utime+stime over the measured calls
	StartupMS   []num    `json:"startup_ms"`
	PeakRSSMiB  []num    `json:"peak_rss_mib,omitempty"`
	// Per call: the proxy's read+write system calls and its threads'
	// context switches (informational; no target reads them).
	SyscallsPerCall []num `json:"syscalls_per_call,omitempty"`
	SwitchesPerCall []num `json:"switches_per_call,omitempty"`
	// -pathclock: the proxy's path clock, one report per alternation.
	Clocks []pathclock.Report `json:"path_clocks,omitempty"`

	MedianRoundTripUS num `json:"median_round_trip_us"`
	MedianCPUStatUS   num `json:"median_cpu_stat_us"`
	MedianCPUSchedUS  num `json:"median_cpu_sched_us"`
	MedianStartupMS   num `json:"median_startup_ms"`
	MaxPeakRSSMiB     num `json:"max_peak_rss_mib"`
	CPUVsFloor        num `json:"cpu_vs_floor"`        // paired ratio, CPUSource
	RoundTripVsFloor  num `json:"round_trip_vs_floor"` // paired ratio
	RoundTripVsDirect num `json:"round_trip_vs_direct"`
}

// floors names, for each measured mcpseal path, the bare program it is
// compared with.
var floors = map[string]string{
	"stdio.mcpseal": "stdio.relay",
	// -telemetry: the same run with its exporters on, against it off.
	"stdio.mcpseal-observed": "stdio.mcpseal",
	"stdio.mcpseal-metrics":  "stdio.mcpseal",
	"stdio.mcpseal-again":    "stdio.mcpseal", // the A/A control: no target
	"stdio.mcpseal-baseline": "stdio.mcpseal", // -baseline, an A/B: no target
	"http.gateway-url":       "http.revproxy",
	"http.gateway-cmd":       "http.bridge",
}

func newReport(o options) *report {
	goV, cpus, load := hostInfo()
	r := &report{Format: reportFormat, Date: time.Now().UTC().Format(time.RFC3339), Go: goV, CPUs: cpus, LoadAvg: load,
		Calls: o.calls, Warmup: o.warmup, Rounds: o.rounds, Tools: o.tools, CPUSource: o.cpuSource, Profiling: o.profileDir != "", Clocked: o.pathClock}
	if o.rounds < 5 {
		r.Notes = append(r.Notes, fmt.Sprintf("only %d alternations: the issue's targets ask for the median of at least 5; this is a smoke run, not a claim (exit status 1 whatever the figures)", o.rounds))
	}
	if r.Profiling {
		r.Notes = append(r.Notes, "CPU profiling was on: figures are not comparable and targets are not judged")
	}
	if r.Clocked {
		r.Notes = append(r.Notes, "path clocks were on: figures are not comparable and targets are not judged")
	}
	return r
}

func newResults(paths []path) []*pathResult {
	res := make([]*pathResult, len(paths))
	for i, p := range paths {
		res[i] = &pathResult{Key: p.key, Label: p.label, Proxy: p.key != "stdio.direct" && p.key != "http.direct"}
	}
	return res
}

func (p *pathResult) add(s sample, calls int) {
	us := func(d time.Duration) num { return num(float64(d) / 1e3) }
	p.RoundTripUS = append(p.RoundTripUS, us(s.perCall))
	p.StartupMS = append(p.StartupMS, num(float64(s.startup)/1e6))
	if p.Proxy {
		p.CPUTicks = append(p.CPUTicks, s.cpuTicks)
		p.CPUStatUS = append(p.CPUStatUS, num(float64(s.cpuTicks)*1e6/userHZ/float64(calls)))
		sched := math.NaN()
		if s.schedNS > 0 {
			sched = float64(s.schedNS) / 1e3 / float64(calls)
		}
		p.CPUSchedUS = append(p.CPUSchedUS, num(sched))
		p.PeakRSSMiB = append(p.PeakRSSMiB, num(float64(s.rssKiB)/1024))
		p.SyscallsPerCall = append(p.SyscallsPerCall, num(float64(s.syscalls)/float64(calls)))
		p.SwitchesPerCall = append(p.SwitchesPerCall, num(float64(s.switches)/float64(calls)))
	}
	if s.clock != nil {
		p.Clocks = append(p.Clocks, *s.clock)
	}
}

func floats(v []num) []float64 {
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = float64(x)
	}
	return f
}

func (p *pathResult) cpu(source string) []float64 {
	if source == "sched" {
		return floats(p.CPUSchedUS)
	}
	return floats(p.CPUStatUS)
}

// summarise fills the medians and ratios of one group of paths.
func summarise(group []*pathResult, source string) {
	byKey := map[string]*pathResult{}
	for _, p := range group {
		byKey[p.Key] = p
	}
	for _, p := range group {
		p.MedianRoundTripUS = num(median(floats(p.RoundTripUS)))
		p.MedianStartupMS = num(median(floats(p.StartupMS)))
		p.MedianCPUStatUS = num(median(floats(p.CPUStatUS)))
		p.MedianCPUSchedUS = num(median(floats(p.CPUSchedUS)))
		p.MaxPeakRSSMiB = num(maxOf(floats(p.PeakRSSMiB)))
		p.CPUVsFloor, p.RoundTripVsFloor, p.RoundTripVsDirect = num(math.NaN()), num(math.NaN()), num(math.NaN())
		if f := byKey[floors[p.Key]]; f != nil {
			p.CPUVsFloor = num(pairedRatio(p.cpu(source), f.cpu(source)))
			p.RoundTripVsFloor = num(pairedRatio(floats(p.RoundTripUS), floats(f.RoundTripUS)))
		}
		if d := byKey[strings.SplitN(p.Key, ".", 2)[0]+".direct"]; d != nil && d != p {
			p.RoundTripVsDirect = num(pairedRatio(floats(p.RoundTripUS), floats(d.RoundTripUS)))
		}
	}
}

// judge summarises every generation and sets the targets.
func (r *report) judge(o options) {
	for _, g := range r.Generations {
		summarise(g.Stdio, r.CPUSource)
		summarise(g.HTTP, r.CPUSource)
		r.Targets = append(r.Targets, targetsFor(g)...)
		r.Notes = append(r.Notes, resolutionNotes(g, r.CPUSource)...)
		r.Notes = append(r.Notes, controlNotes(g, r.CPUSource)...)
	}
	for i := range r.Targets {
		r.Targets[i].judge()
	}
	// A claim needs the median of at least 5 alternations.
	r.Met = allMet(r.Targets) && o.rounds >= 5
	_, _, r.LoadAvgEnd = hostInfo()
}

// minTicks is the fewest utime+stime ticks per session for which a floor's
// stat figure is read to about 5 % (one tick is 10 ms).
const minTicks = 20

// resolutionNotes warns when a floor's CPU time is too few ticks for the
// stat figure to mean much.
func resolutionNotes(g *genResult, source string) []string {
	if source != "stat" {
		return nil
	}
	var notes []string
	for _, p := range append(g.Stdio, g.HTTP...) {
		if p.Proxy && !p.isMcpseal() && len(p.CPUTicks) > 0 {
			if t := median(u64s(p.CPUTicks)); t < minTicks {
				notes = append(notes, fmt.Sprintf("%s, %s: %.0f ticks of CPU per session; ticks are 10 ms, so its figure is coarse (raise -calls, or read the ns clock: -cpu sched)", g.Protocol, p.Label, t))
			}
		}
	}
	return notes
}

// controlNotes reports the A/A control of -telemetry: the same mcpseal
// run paired with itself. Its per-alternation CPU ratios are the spread a
// paired ratio has when nothing differs; no target reads them.
func controlNotes(g *genResult, source string) []string {
	var notes []string
	if q, ok := pairedSpread(g, "stdio.mcpseal-again", source); ok {
		notes = append(notes, fmt.Sprintf("%s: A/A control, the same mcpseal run paired with itself: CPU %.2fx (alternations %.2fx to %.2fx), round trip %.2fx; a telemetry ratio is told from noise only by more than that",
			g.Protocol, q.cpu, q.lo, q.hi, q.rt))
	}
	if q, ok := pairedSpread(g, "stdio.mcpseal-baseline", source); ok {
		notes = append(notes, fmt.Sprintf("%s: A/B, the -baseline binary's run paired with this tree's: CPU %.2fx (alternations %.2fx to %.2fx, above 1 in %d of %d), round trip %.2fx; above 1, the baseline costs more",
			g.Protocol, q.cpu, q.lo, q.hi, q.above, q.n, q.rt))
	}
	return notes
}

// spread is a path's paired ratios against plain run: the medians and the
// per-alternation CPU range.
type spread struct {
	cpu, rt, lo, hi float64
	above, n        int
}

func pairedSpread(g *genResult, key, source string) (spread, bool) {
	var other, run *pathResult
	for _, p := range g.Stdio {
		switch p.Key {
		case key:
			other = p
		case "stdio.mcpseal":
			run = p
		}
	}
	if other == nil || run == nil {
		return spread{}, false
	}
	var rs []float64
	a, b := other.cpu(source), run.cpu(source)
	for i := range min(len(a), len(b)) {
		if q := ratio(a[i], b[i]); !math.IsNaN(q) {
			rs = append(rs, q)
		}
	}
	if len(rs) == 0 {
		return spread{}, false
	}
	q := spread{cpu: float64(other.CPUVsFloor), rt: float64(other.RoundTripVsFloor), lo: slices.Min(rs), hi: slices.Max(rs), n: len(rs)}
	for _, r := range rs {
		if r > 1 {
			q.above++
		}
	}
	return q, true
}

func (p *pathResult) isMcpseal() bool { _, ok := floors[p.Key]; return ok }

func u64s(v []uint64) []float64 {
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = float64(x)
	}
	return f
}

// targetsFor lists issue 12's targets for the paths g measured.
func targetsFor(g *genResult) []target {
	var ts []target
	find := func(group []*pathResult, key string) *pathResult {
		for _, p := range group {
			if p.Key == key {
				return p
			}
		}
		return nil
	}
	add := func(key, what string, v, limit float64, strict bool, unit string) {
		ts = append(ts, target{Key: key, Protocol: g.Protocol, What: what, Value: num(v), Limit: num(limit), Strict: strict, Unit: unit})
	}
	if m, d := find(g.Stdio, "stdio.mcpseal"), find(g.Stdio, "stdio.direct"); m != nil {
		add("run.cpu", "run: CPU per call vs bare relay", float64(m.CPUVsFloor), 2.0, false, "x")
		add("run.round-trip", "run: round trip vs bare relay", float64(m.RoundTripVsFloor), 1.10, false, "x")
		add("run.rss", "run: peak RSS, every session", float64(m.MaxPeakRSSMiB), 20, true, "MiB")
		if d != nil {
			added := make([]float64, 0, len(m.StartupMS))
			for i := range min(len(m.StartupMS), len(d.StartupMS)) {
				added = append(added, float64(m.StartupMS[i]-d.StartupMS[i]))
			}
			add("run.startup", "run: start-up to first listing, added", median(added), 15, true, "ms")
		}
	}
	if m := find(g.Stdio, "stdio.mcpseal-observed"); m != nil {
		add("run.telemetry.cpu", "run: CPU per call, traces+metrics on vs off", float64(m.CPUVsFloor), 1.15, false, "x")
	}
	if m := find(g.Stdio, "stdio.mcpseal-metrics"); m != nil {
		add("run.metrics.cpu", "run: CPU per call, metrics on vs off", float64(m.CPUVsFloor), 1.15, false, "x")
	}
	if m := find(g.HTTP, "http.gateway-url"); m != nil {
		add("gateway.url.cpu", "gateway url route: CPU vs reverse proxy", float64(m.CPUVsFloor), 2.0, false, "x")
		add("gateway.url.round-trip", "gateway url route: round trip vs reverse proxy", float64(m.RoundTripVsFloor), 1.10, false, "x")
	}
	if m := find(g.HTTP, "http.gateway-cmd"); m != nil {
		add("gateway.cmd.cpu", "gateway command route: CPU vs bridge", float64(m.CPUVsFloor), 2.0, false, "x")
		add("gateway.cmd.round-trip", "gateway command route: round trip vs bridge", float64(m.RoundTripVsFloor), 1.10, false, "x")
	}
	if b := g.Big; b != nil {
		add("big.time", fmt.Sprintf("%d tools: first session vs direct listing", b.Tools), pairedRatio(floats(b.FirstMS), floats(b.DirectMS)), 1.5, false, "x")
		add("big.rss", fmt.Sprintf("%d tools: peak RSS vs listing size", b.Tools), ratio(maxOf(floats(b.PeakRSSMiB))*(1<<20), float64(b.ListingBytes)), 4, false, "x")
	}
	return ts
}

func writeJSON(w io.Writer, r *report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func writeText(w io.Writer, r *report) error {
	fmt.Fprintf(w, "mcpseal benchmark, %s, %s, %d CPUs, load average %s at the start, %s at the end\n", r.Date, r.Go, r.CPUs, r.LoadAvg, r.LoadAvgEnd)
	fmt.Fprintf(w, "go-sdk client and server, %d tools listed, echo called %d times per session after %d unmeasured; %d alternations, medians;\n", r.Tools, r.Calls, r.Warmup, r.Rounds)
	fmt.Fprintf(w, "ratios are the median over alternations of each alternation's ratio; CPU is the proxy process alone, children excluded (ratios use %s)\n", cpuSourceText(r.CPUSource))
	for _, g := range r.Generations {
		fmt.Fprintf(w, "\nprotocol %s\n", g.Protocol)
		if err := writePaths(w, g); err != nil {
			return err
		}
		if err := writeClocks(w, g.Stdio); err != nil {
			return err
		}
		if b := g.Big; b != nil {
			ms := func(v []num) string { return formatValue(median(floats(v)), "ms") }
			fmt.Fprintf(w, "%d tools (%.1f MB listing), spawn to the last page (of which the handshake), median of %d:\n", b.Tools, float64(b.ListingBytes)/1e6, len(b.DirectMS))
			fmt.Fprintf(w, "  direct %s (%s); mcpseal run, empty pin store %s (%s); pinned %s (%s); mcpseal peak RSS %s (first session %s, pinned %s)\n",
				ms(b.DirectMS), ms(b.DirectConnectMS), ms(b.FirstMS), ms(b.FirstConnectMS), ms(b.PinnedMS), ms(b.PinnedConnectMS),
				formatValue(maxOf(floats(b.PeakRSSMiB)), "MiB"), formatValue(maxOf(floats(b.FirstRSSMiB)), "MiB"), formatValue(maxOf(floats(b.PinnedRSSMiB)), "MiB"))
		}

	}
	fmt.Fprintln(w, "\ntargets (issue 12)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	missed := 0
	for _, t := range r.Targets {
		verdict := "met"
		if !t.Met {
			verdict = "MISSED"
			missed++
		}
		switch {
		case r.Profiling:
			verdict = "not judged (profiling)"
		case r.Clocked:
			verdict = "not judged (path clocks)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Protocol, t.What, formatValue(float64(t.Value), t.Unit), t.bound(), verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	switch {
	case r.Profiling, r.Clocked:
	case missed > 0:
		fmt.Fprintf(w, "%d of %d targets missed\n", missed, len(r.Targets))
	case r.Rounds < 5:
		fmt.Fprintf(w, "all %d targets met, but with fewer than 5 alternations: not a claim\n", len(r.Targets))
	default:
		fmt.Fprintf(w, "all %d targets met\n", len(r.Targets))
	}
	return nil
}

// writePaths prints one generation's paths as a table.
func writePaths(w io.Writer, g *genResult) error {
	if len(g.Stdio)+len(g.HTTP) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-28s\tCPU/call\t(ns clock)\tCPU vs floor\tround trip\tvs floor\tvs direct\tfirst listing\tpeak RSS\tsyscalls/call\tswitches/call\t\n", "path")
	for _, group := range [][]*pathResult{g.Stdio, g.HTTP} {
		if len(group) == 0 {
			continue
		}
		for _, p := range group {
			cpu, sched, rss, sys, sw := "—", "—", "—", "—", "—"
			if p.Proxy {
				cpu, sched, rss = fmtUS(p.MedianCPUStatUS, 1), fmtUS(p.MedianCPUSchedUS, 1), formatValue(float64(p.MaxPeakRSSMiB), "MiB")
				sys, sw = fmt.Sprintf("%.1f", median(floats(p.SyscallsPerCall))), fmt.Sprintf("%.1f", median(floats(p.SwitchesPerCall)))
			}
			fmt.Fprintf(tw, "%-28s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", strings.SplitN(p.Key, ".", 2)[0]+" "+p.Label, cpu, sched,
				fmtRatio(p.CPUVsFloor), fmtUS(p.MedianRoundTripUS, 0), fmtRatio(p.RoundTripVsFloor), fmtRatio(p.RoundTripVsDirect),
				formatValue(float64(p.MedianStartupMS), "ms"), rss, sys, sw)
		}
	}
	return tw.Flush()
}

func cpuSourceText(s string) string {
	if s == "sched" {
		return "the schedstat ns clock"
	}
	return "utime+stime from /proc/PID/stat"
}

func fmtUS(v num, prec int) string {
	if !v.ok() {
		return "n/a"
	}
	if v >= 10000 {
		return fmt.Sprintf("%.2f ms", float64(v)/1000)
	}
	return fmt.Sprintf("%.*f µs", prec, float64(v))
}

func fmtRatio(v num) string {
	if !v.ok() {
		return "—"
	}
	return fmt.Sprintf("%.2fx", float64(v))
}
