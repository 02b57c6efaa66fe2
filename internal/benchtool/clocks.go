package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/mcpseal/mcpseal/internal/pathclock"
)

// clockFigures are one session's path clock as means: per frame for each
// direction's step (wall and thread CPU) and write, per call for the hooks.
type clockFigures struct {
	clientGate, clientCPU, clientWrite float64 // µs per frame read from the client
	serverGate, serverCPU, serverWrite float64 // µs per frame read from the server
	call, result, event                float64 // µs per hook call
	eventsPerCall                      float64
}

func figures(r pathclock.Report) clockFigures {
	per := func(ns, n int64) float64 {
		if n == 0 {
			return math.NaN()
		}
		return float64(ns) / 1e3 / float64(n)
	}
	f := clockFigures{
		clientGate: per(r.FromClient.GateNS, r.FromClient.Frames), clientCPU: per(r.FromClient.GateCPUNS, r.FromClient.CPUFrames),
		clientWrite: per(r.FromClient.WriteNS, r.FromClient.Frames),
		serverGate:  per(r.FromServer.GateNS, r.FromServer.Frames), serverCPU: per(r.FromServer.GateCPUNS, r.FromServer.CPUFrames),
		serverWrite: per(r.FromServer.WriteNS, r.FromServer.Frames),
		call:        per(r.Call.NS, r.Call.Count), result: per(r.Result.NS, r.Result.Count), event: per(r.Event.NS, r.Event.Count),
		eventsPerCall: math.NaN(),
	}
	if r.Call.Count > 0 {
		f.eventsPerCall = float64(r.Event.Count) / float64(r.Call.Count)
	}
	return f
}

// medianClock is the median over alternations of each figure.
func medianClock(rs []pathclock.Report) clockFigures {
	var all []clockFigures
	for _, r := range rs {
		all = append(all, figures(r))
	}
	// A figure a session has none of (no calls, no thread CPU) is left
	// out of its median rather than making it unknown.
	m := func(get func(clockFigures) float64) float64 {
		var v []float64
		for _, f := range all {
			if x := get(f); !math.IsNaN(x) {
				v = append(v, x)
			}
		}
		return median(v)
	}
	return clockFigures{
		clientGate: m(func(f clockFigures) float64 { return f.clientGate }), clientCPU: m(func(f clockFigures) float64 { return f.clientCPU }),
		clientWrite: m(func(f clockFigures) float64 { return f.clientWrite }),
		serverGate:  m(func(f clockFigures) float64 { return f.serverGate }), serverCPU: m(func(f clockFigures) float64 { return f.serverCPU }),
		serverWrite: m(func(f clockFigures) float64 { return f.serverWrite }),
		call:        m(func(f clockFigures) float64 { return f.call }), result: m(func(f clockFigures) float64 { return f.result }),
		event: m(func(f clockFigures) float64 { return f.event }), eventsPerCall: m(func(f clockFigures) float64 { return f.eventsPerCall }),
	}
}

// writeClocks prints, for the stdio paths that were clocked, where a round
// trip's time goes inside the proxy, and what the gate's two steps take
// against what the round-trip target leaves.
func writeClocks(w io.Writer, paths []*pathResult) error {
	var relay, gated *clockFigures
	var relayRT float64
	clocked := false
	for _, p := range paths {
		if len(p.Clocks) > 0 {
			clocked = true
		}
	}
	if !clocked {
		return nil
	}
	fmt.Fprintln(w, "where a call's frames spend their time inside the proxy (-pathclock; means per frame over each session, its warm-up and listing included; medians over alternations; CPU: the step's thread):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-28s\tclient→server step\t(CPU)\twrite\tserver→client step\t(CPU)\twrite\tcall hook\tresult hook\tevent hook\tevents/call\t\n", "path")
	us := func(v float64) string { return fmtUS(num(v), 1) }
	hook := func(v float64) string {
		if math.IsNaN(v) {
			return "—"
		}
		return us(v)
	}
	for _, p := range paths {
		if len(p.Clocks) == 0 {
			continue
		}
		f := medianClock(p.Clocks)
		switch p.Key {
		case "stdio.relay":
			relay, relayRT = &f, float64(p.MedianRoundTripUS)
		case "stdio.mcpseal":
			gated = &f
		}
		perCall := "—"
		if !math.IsNaN(f.eventsPerCall) {
			perCall = fmt.Sprintf("%.1f", f.eventsPerCall)
		}
		fmt.Fprintf(tw, "%-28s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", strings.SplitN(p.Key, ".", 2)[0]+" "+p.Label,
			us(f.clientGate), us(f.clientCPU), us(f.clientWrite), us(f.serverGate), us(f.serverCPU), us(f.serverWrite),
			hook(f.call), hook(f.result), hook(f.event), perCall)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if relay != nil && gated != nil {
		steps := gated.clientGate + gated.serverGate - relay.clientGate - relay.serverGate
		fmt.Fprintf(w, "the gate's two steps on a call's path: %s a round trip more than the relay's (its clocks' own cost taken off); the 1.10x round-trip target leaves %s (a tenth of the relay's %s)\n",
			us(steps), us(relayRT/10), fmtUS(num(relayRT), 0))
	}
	return nil
}
