// Package pathclock times what a proxy does on a message's path: from the
// moment a reader holds a whole frame to the moment what it forwards has
// been written, split into the gate's step and the write, and the call
// gate's hooks inside the step. It is a developer's instrument for the
// round-trip figures of docs/performance.md (issue 12), off unless
// MCPSEAL_PATHCLOCK names a file:
//
//	MCPSEAL_PATHCLOCK=/tmp/run.clock.json mcpseal run -- server ...
//
// `mcpseal run` and the benchmark's bare relay (internal/benchtool/relay)
// honour it and write a Report as JSON to that file when they end. The
// file must not exist yet (O_EXCL, mode 0600), like MCPSEAL_CPUPROFILE's.
//
// The clocks cost four clock reads and two thread-id reads per frame, so
// a clocked run's figures are not compared with an unclocked one's.
package pathclock

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// Env names the file a Report is written to.
const Env = "MCPSEAL_PATHCLOCK"

// A Clock gathers the times of one process. Its methods are safe for
// concurrent use; a nil *Clock is not used (callers check).
type Clock struct {
	// FromClient is the path of frames read from the client (towards the
	// server), FromServer the other way.
	FromClient, FromServer Dir
	// Call, Result and Event are the call gate's hooks (gate.Hooks), run
	// inside the step.
	Call, Result, Event Span
}

// A Dir is one direction's path.
type Dir struct {
	frames, gateNS, writeNS atomic.Int64
	// cpuFrames counts the frames whose step ran on one thread from start
	// to end, so that its thread CPU time is the step's; cpuNS sums them.
	cpuFrames, cpuNS atomic.Int64
}

// A Span is one hook's calls and their time.
type Span struct{ count, ns atomic.Int64 }

// A Mark is a moment on a frame's path: the wall clock, and the calling
// thread and its CPU time.
type Mark struct {
	wall time.Time
	tid  int
	cpu  time.Duration // -1: not known on this platform
}

// Now marks the moment a reader holds a frame.
func Now() Mark {
	tid, cpu := threadCPU()
	return Mark{wall: time.Now(), tid: tid, cpu: cpu}
}

// Gated records the step that began at m and returns the mark the write
// begins at.
func (d *Dir) Gated(m Mark) Mark {
	n := Now()
	d.frames.Add(1)
	d.gateNS.Add(int64(n.wall.Sub(m.wall)))
	if m.cpu >= 0 && n.cpu >= m.cpu && n.tid == m.tid {
		d.cpuFrames.Add(1)
		d.cpuNS.Add(int64(n.cpu - m.cpu))
	}
	return n
}

// Written records the write that began at m.
func (d *Dir) Written(m Mark) { d.writeNS.Add(int64(time.Since(m.wall))) }

// Since records one call of the hook that began at t0.
func (s *Span) Since(t0 time.Time) {
	s.count.Add(1)
	s.ns.Add(int64(time.Since(t0)))
}

// A Report is what a Clock gathered, in nanoseconds, as written to the
// file.
type Report struct {
	Format     string     `json:"format"` // "mcpseal-pathclock/1"
	FromClient DirReport  `json:"from_client"`
	FromServer DirReport  `json:"from_server"`
	Call       SpanReport `json:"call_hook"`
	Result     SpanReport `json:"result_hook"`
	Event      SpanReport `json:"event_hook"`
}

// A DirReport is one direction: frames, the gate's step (wall, and thread
// CPU over the frames whose step stayed on one thread), the write.
type DirReport struct {
	Frames    int64 `json:"frames"`
	GateNS    int64 `json:"gate_ns"`
	CPUFrames int64 `json:"cpu_frames"`
	GateCPUNS int64 `json:"gate_cpu_ns"`
	WriteNS   int64 `json:"write_ns"`
}

// A SpanReport is one hook.
type SpanReport struct {
	Count int64 `json:"count"`
	NS    int64 `json:"ns"`
}

// Format is the Report's format.
const Format = "mcpseal-pathclock/1"

// Report returns what c gathered so far.
func (c *Clock) Report() Report {
	dir := func(d *Dir) DirReport {
		return DirReport{Frames: d.frames.Load(), GateNS: d.gateNS.Load(), CPUFrames: d.cpuFrames.Load(),
			GateCPUNS: d.cpuNS.Load(), WriteNS: d.writeNS.Load()}
	}
	span := func(s *Span) SpanReport { return SpanReport{Count: s.count.Load(), NS: s.ns.Load()} }
	return Report{Format: Format, FromClient: dir(&c.FromClient), FromServer: dir(&c.FromServer),
		Call: span(&c.Call), Result: span(&c.Result), Event: span(&c.Event)}
}

// Open returns a Clock and the function that writes its Report to the file
// getenv(Env) names, or nil and a no-op when it is unset. The file is
// created now, so that a run asked to be clocked never runs unclocked.
//
// A file in mcpseal's home folder (home, when not empty) is refused: a
// client config's env block that names, say, its policy.json would
// otherwise plant a file there that every later run reads and fails on.
func Open(getenv func(string) string, home string) (*Clock, func() error, error) {
	path := getenv(Env)
	if path == "" {
		return nil, func() error { return nil }, nil
	}
	if home != "" && Within(path, home) {
		return nil, nil, fmt.Errorf("%s names %q, inside mcpseal's home %q: refused", Env, path, home)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			err = pe.Err // the path is quoted below, not echoed raw
		}
		return nil, nil, fmt.Errorf("%s %q: %w", Env, path, err)
	}
	c := &Clock{}
	return c, func() error {
		err := json.NewEncoder(f).Encode(c.Report())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}

// Without returns env (KEY=VALUE entries) without Env and the profiling
// variables MCPSEAL_CPUPROFILE and MCPSEAL_MEMPROFILE: what a proxy passes
// to the server it starts, which is not the one being measured (and,
// given the name, could write into the file the proxy reports to).
func Without(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case Env, "MCPSEAL_CPUPROFILE", "MCPSEAL_MEMPROFILE":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Within reports whether path's folder is dir or below it, with symbolic
// links in both resolved as far as they exist. The profiles' variables
// (MCPSEAL_CPUPROFILE, MCPSEAL_MEMPROFILE) are held to the same rule.
func Within(path, dir string) bool {
	resolve := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return filepath.Clean(p)
	}
	folder, home := resolve(filepath.Dir(path)), resolve(dir)
	rel, err := filepath.Rel(home, folder)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Read reads a Report written by Open's function.
func Read(path string) (Report, error) {
	var r Report
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if r.Format != Format {
		return r, fmt.Errorf("%s: format %q, want %q", path, r.Format, Format)
	}
	return r, nil
}
