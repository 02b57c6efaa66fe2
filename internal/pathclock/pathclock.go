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
// file must not exist yet (O_EXCL, mode 0600), like MCPSEAL_CPUPROFILE's,
// and may not be in, at or above mcpseal's home (Create).
//
// The clocks cost four clock reads and two thread-id reads per frame, so
// a clocked run's figures are not compared with an unclocked one's.
package pathclock

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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
	// Call, Result and Event are the call gate's hooks (gate.Hooks),
	// timed wherever they run: almost always inside a reader's step, but
	// also in the gate's timer and a slow decision's goroutine.
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
// created now (Create: never in mcpseal's homes), so that a run asked to
// be clocked never runs unclocked.
func Open(getenv func(string) string, homes ...string) (*Clock, func() error, error) {
	path := getenv(Env)
	if path == "" {
		return nil, func() error { return nil }, nil
	}
	f, err := Create(Env, path, homes...)
	if err != nil {
		return nil, nil, err
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

// Create creates the file a developer's switch (name: MCPSEAL_PATHCLOCK,
// MCPSEAL_CPUPROFILE, MCPSEAL_MEMPROFILE) names: a new file (O_EXCL, mode
// 0600, so nothing is overwritten and no link followed) that is neither
// in one of homes (mcpseal's home folders) or below it, nor the home or a
// folder above it. A client config's env block sets these variables: a
// file planted in the home (its policy.json, a pin) or in its place would
// break every later run.
//
// Where the file is is decided as the kernel resolved it, by comparing
// files, not path text: the folder it was created in and each folder
// above it (reached by appending "..", as the kernel walks "..": after
// the links before it) against each home, and each existing folder on the
// way to each home against the file itself. A file that fails is removed.
func Create(name, path string, homes ...string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			err = pe.Err // the path is quoted below, not echoed raw
		}
		return nil, fmt.Errorf("%s %q: %w", name, path, err)
	}
	if why := misplaced(path, f, homes); why != "" {
		f.Close()
		if err := os.Remove(path); err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("%s names %q, %s: refused, and the empty file it created could not be removed (%v): remove it", name, path, why, err)
		}
		return nil, fmt.Errorf("%s names %q, %s: refused", name, path, why)
	}
	return f, nil
}

// maxDepth bounds the folders walked above a file or a home.
const maxDepth = 4096

// misplaced says why the file f, just created at path, is in or at one of
// homes, or "" when it is not.
func misplaced(path string, f *os.File, homes []string) string {
	fi, err := f.Stat()
	if err != nil {
		return "its place cannot be checked"
	}
	for _, home := range homes {
		if home == "" {
			continue
		}
		if hi, err := os.Stat(home); err == nil {
			dir := rawDir(path)
			for range maxDepth {
				di, err := os.Stat(dir)
				if err != nil {
					return "its folder cannot be checked"
				}
				if os.SameFile(di, hi) {
					return fmt.Sprintf("inside mcpseal's home %q", home)
				}
				// Only the root is its own parent. Any error (a path grown
				// past the kernel's limit by the "..", a folder that may not
				// be searched) leaves the place unknown: refused.
				up := dir + string(filepath.Separator) + ".."
				ui, err := os.Stat(up)
				if err != nil {
					return "its folder cannot be checked"
				}
				if os.SameFile(ui, di) {
					break
				}
				dir = up
			}
		}
		for p, n := home, 0; n < maxDepth; n++ {
			if pi, err := os.Stat(p); err == nil && os.SameFile(pi, fi) {
				return fmt.Sprintf("at or above mcpseal's home %q", home)
			}
			next := rawDir(p)
			if next == p {
				break
			}
			p = next
		}
	}
	return ""
}

// rawDir is p without its last element, as text, with no cleaning: "a/../b"
// stays "a/.." (a link a may lead anywhere). "." for a bare name.
func rawDir(p string) string {
	trimmed := strings.TrimRight(p, separators)
	if trimmed == "" {
		return p // the root
	}
	i := strings.LastIndexAny(trimmed, separators)
	switch {
	case i < 0:
		return "."
	case i == 0:
		return trimmed[:1]
	}
	return trimmed[:i]
}

// Without returns env (KEY=VALUE entries) without Env and the profiling
// variables MCPSEAL_CPUPROFILE and MCPSEAL_MEMPROFILE: what a proxy passes
// to the server it starts, which is not the one being measured (and,
// given the name, could write into the file the proxy reports to). On
// Windows, where variable names are read without regard to case, so are
// these.
func Without(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if isSwitch(k) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func isSwitch(k string) bool {
	for _, s := range []string{Env, "MCPSEAL_CPUPROFILE", "MCPSEAL_MEMPROFILE"} {
		if k == s || runtime.GOOS == "windows" && strings.EqualFold(k, s) {
			return true
		}
	}
	return false
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
