package main

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{1, 1, 100, 1, 1}, 1},
	} {
		in := slices.Clone(c.in)
		if got := median(in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("median changed its input: %v", in)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is a number")
	}
}

func TestRatio(t *testing.T) {
	if r := ratio(3, 2); r != 1.5 {
		t.Errorf("ratio(3, 2) = %v", r)
	}
	for _, b := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if r := ratio(1, b); !math.IsNaN(r) {
			t.Errorf("ratio(1, %v) = %v, want NaN", b, r)
		}
	}
}

func TestPairedRatio(t *testing.T) {
	// Load doubles both paths in the second alternation: the ratio within
	// each alternation stays 2.
	if r := pairedRatio([]float64{200, 400, 210}, []float64{100, 200, 105}); r != 2 {
		t.Errorf("pairedRatio = %v, want 2", r)
	}
	// An unmeasured floor (0 ticks) is skipped, not divided by.
	if r := pairedRatio([]float64{300, 200}, []float64{0, 100}); r != 2 {
		t.Errorf("pairedRatio skipping a zero = %v, want 2", r)
	}
	if r := pairedRatio([]float64{1}, []float64{0}); !math.IsNaN(r) {
		t.Errorf("pairedRatio with no measured pair = %v, want NaN", r)
	}
}

func TestRotation(t *testing.T) {
	seen := map[int][]int{} // path -> places
	for r := range 3 {
		for place, p := range rotation(3, r) {
			seen[p] = append(seen[p], place)
		}
	}
	for p, places := range seen {
		slices.Sort(places)
		if !slices.Equal(places, []int{0, 1, 2}) {
			t.Errorf("path %d took places %v in 3 alternations", p, places)
		}
	}
}

func TestTargetJudge(t *testing.T) {
	for _, c := range []struct {
		value, limit float64
		strict, met  bool
	}{
		{2.0, 2.0, false, true}, // <= 2.0x: on the bound is met
		{2.01, 2.0, false, false},
		{20, 20, true, false}, // < 20 MiB: on the bound is missed
		{19.9, 20, true, true},
		{math.NaN(), 2, false, false}, // no figure, no claim
		{math.Inf(1), 2, false, false},
	} {
		tg := target{Value: num(c.value), Limit: num(c.limit), Strict: c.strict}
		tg.judge()
		if tg.Met != c.met {
			t.Errorf("%v against %v (strict %v): met %v, want %v", c.value, c.limit, c.strict, tg.Met, c.met)
		}
	}
	if allMet(nil) {
		t.Error("no targets counted as all met")
	}
	if allMet([]target{{Met: true}, {Met: false}}) {
		t.Error("a missed target counted as all met")
	}
}

func TestNumJSON(t *testing.T) {
	b, err := json.Marshal([]num{1.5, num(math.NaN()), num(math.Inf(-1))})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "[1.5,null,null]" {
		t.Errorf("got %s", b)
	}
}

// TestTargetsFromResults runs the summary and the targets on made-up
// samples: mcpseal at 3x the relay's CPU and 1.05x its round trip.
func TestTargetsFromResults(t *testing.T) {
	mk := func(key string, rt, cpu, rss, startup []float64) *pathResult {
		p := &pathResult{Key: key, Proxy: cpu != nil}
		for i := range rt {
			p.RoundTripUS = append(p.RoundTripUS, num(rt[i]))
			p.StartupMS = append(p.StartupMS, num(startup[i]))
			if cpu != nil {
				p.CPUStatUS = append(p.CPUStatUS, num(cpu[i]))
				p.CPUSchedUS = append(p.CPUSchedUS, num(cpu[i]))
				p.PeakRSSMiB = append(p.PeakRSSMiB, num(rss[i]))
			}
		}
		return p
	}
	g := &genResult{Protocol: "2026-07-28", Stdio: []*pathResult{
		mk("stdio.direct", []float64{300, 310, 320}, nil, nil, []float64{9, 9, 9}),
		mk("stdio.relay", []float64{400, 400, 400}, []float64{40, 40, 40}, []float64{3, 3, 3}, []float64{10, 10, 10}),
		mk("stdio.mcpseal", []float64{420, 420, 420}, []float64{120, 120, 120}, []float64{18, 21, 19}, []float64{20, 21, 22}),
	}}
	summarise(g.Stdio, "stat")
	got := map[string]target{}
	for _, tg := range targetsFor(g) {
		tg.judge()
		got[tg.Key] = tg
	}
	for key, want := range map[string]struct {
		value float64
		met   bool
	}{
		"run.cpu":        {3, false},
		"run.round-trip": {1.05, true},
		"run.rss":        {21, false}, // the worst session counts
		"run.startup":    {12, true},
	} {
		tg, ok := got[key]
		if !ok {
			t.Errorf("no target %s", key)
			continue
		}
		if math.Abs(float64(tg.Value)-want.value) > 1e-9 || tg.Met != want.met {
			t.Errorf("%s = %v (met %v), want %v (met %v)", key, tg.Value, tg.Met, want.value, want.met)
		}
	}
	if len(got) != 4 {
		t.Errorf("%d targets for stdio alone, want 4", len(got))
	}
	var sb strings.Builder
	rep := &report{Generations: []*genResult{g}, Targets: targetsFor(g)}
	if err := writeText(&sb, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "MISSED") {
		t.Errorf("the text report does not say a target was missed:\n%s", sb.String())
	}
}

func TestTail(t *testing.T) {
	var tl tail
	tl.Write([]byte(strings.Repeat("a", tailSize)))
	tl.Write([]byte("end"))
	s := tl.String()
	if len(s) != tailSize || !strings.HasSuffix(s, "end") {
		t.Errorf("tail kept %d bytes ending %q", len(s), s[len(s)-3:])
	}
}

// TestControlIsNoTarget: the A/A control path is paired with plain run,
// reported in a note with its spread, and judged by no target.
func TestControlIsNoTarget(t *testing.T) {
	mk := pairedPath
	g := &genResult{Protocol: "2026-07-28", Stdio: []*pathResult{
		mk("stdio.relay", []float64{50, 50, 50}),
		mk("stdio.mcpseal", []float64{100, 100, 100}),
		mk("stdio.mcpseal-again", []float64{90, 100, 120}),
	}}
	summarise(g.Stdio, "sched")
	with, without := targetsFor(g), targetsFor(&genResult{Protocol: g.Protocol, Stdio: g.Stdio[:2]})
	if len(with) != len(without) {
		t.Errorf("the control adds targets: %+v", with)
	}
	notes := controlNotes(g, "sched")
	if len(notes) != 1 || !strings.Contains(notes[0], "CPU 1.00x (alternations 0.90x to 1.20x)") {
		t.Errorf("control notes = %q", notes)
	}
	if n := controlNotes(&genResult{Stdio: g.Stdio[:2]}, "sched"); n != nil {
		t.Errorf("a note with no control path: %q", n)
	}
}

// TestBaselineIsNoTarget: the -baseline path is paired with plain run,
// reported in a note that says how often the baseline cost more, and
// judged by no target.
func TestBaselineIsNoTarget(t *testing.T) {
	mk := pairedPath
	g := &genResult{Protocol: "2026-07-28", Stdio: []*pathResult{
		mk("stdio.relay", []float64{50, 50, 50}),
		mk("stdio.mcpseal", []float64{100, 100, 100}),
		mk("stdio.mcpseal-baseline", []float64{95, 110, 120}),
	}}
	summarise(g.Stdio, "sched")
	with, without := targetsFor(g), targetsFor(&genResult{Protocol: g.Protocol, Stdio: g.Stdio[:2]})
	if len(with) != len(without) {
		t.Errorf("the baseline adds targets: %+v", with)
	}
	notes := controlNotes(g, "sched")
	if len(notes) != 1 || !strings.Contains(notes[0], "CPU 1.10x (alternations 0.95x to 1.20x, above 1 in 2 of 3)") {
		t.Errorf("baseline notes = %q", notes)
	}
}

// pairedPath is a measured path with the CPU figures cpu, one per
// alternation, and the same other figures in each.
func pairedPath(key string, cpu []float64) *pathResult {
	p := &pathResult{Key: key, Proxy: true}
	for _, c := range cpu {
		p.RoundTripUS = append(p.RoundTripUS, num(400))
		p.StartupMS = append(p.StartupMS, num(20))
		p.CPUSchedUS = append(p.CPUSchedUS, num(c))
		p.PeakRSSMiB = append(p.PeakRSSMiB, num(19))
	}
	return p
}
