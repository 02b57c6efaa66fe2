package main

import (
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/internal/pathclock"
)

// TestWriteClocks: the means are per frame and per hook call, and the
// gate's steps a round trip are mcpseal's two steps less the relay's
// (the clocks' own cost), set against a tenth of the relay's round trip.
func TestWriteClocks(t *testing.T) {
	dir := func(frames, gate, write int64) pathclock.DirReport {
		return pathclock.DirReport{Frames: frames, GateNS: gate, CPUFrames: frames, GateCPUNS: gate, WriteNS: write}
	}
	relay := &pathResult{Key: "stdio.relay", Label: "bare relay", MedianRoundTripUS: 500, Clocks: []pathclock.Report{
		{FromClient: dir(10, 10_000, 300_000), FromServer: dir(10, 10_000, 400_000)}}}
	gated := &pathResult{Key: "stdio.mcpseal", Label: "mcpseal run", MedianRoundTripUS: 600, Clocks: []pathclock.Report{
		{FromClient: dir(10, 380_000, 250_000), FromServer: dir(10, 160_000, 350_000),
			Call: pathclock.SpanReport{Count: 10, NS: 200_000}, Result: pathclock.SpanReport{Count: 10, NS: 25_000},
			Event: pathclock.SpanReport{Count: 20, NS: 18_000}},
		{FromClient: dir(10, 400_000, 250_000), FromServer: dir(10, 140_000, 350_000)},
		{FromClient: dir(10, 360_000, 250_000), FromServer: dir(10, 150_000, 350_000)}}}
	direct := &pathResult{Key: "stdio.direct", Label: "direct"}
	var b strings.Builder
	if err := writeClocks(&b, []*pathResult{direct, relay, gated}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"stdio bare relay", "1.0 µs", "30.0 µs", "40.0 µs",
		"stdio mcpseal run", "38.0 µs", "15.0 µs", "20.0 µs", "2.5 µs", "0.9 µs", "2.0",
		// (38 + 15) - (1 + 1) µs against 500 / 10.
		"the gate's two steps on a call's path: 51.0 µs a round trip more than the relay's",
		"leaves 50.0 µs (a tenth of the relay's 500 µs)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "stdio direct") {
		t.Errorf("an unclocked path printed:\n%s", out)
	}
	var none strings.Builder
	if err := writeClocks(&none, []*pathResult{direct}); err != nil || none.Len() != 0 {
		t.Errorf("without clocks: %q, %v; want nothing", none.String(), err)
	}
}
