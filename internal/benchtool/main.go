// Command benchtool measures what mcpseal costs, against the floors it
// must be compared with, in one run (issue 12). The official Go SDK client
// calls an echo tool on the official Go SDK server, for both protocol
// generations (2026-07-28 and a 2025-11-25 session), along every path in
// turn, rotating their order every alternation so that machine noise hits
// them alike:
//
//	stdio: direct (the client spawns the server)
//	       bare relay (./relay: two goroutines copying frames)
//	       mcpseal run, defaults (built-in policy, audit on)
//	http:  direct (a go-sdk Streamable HTTP server, ./upstream)
//	       bare reverse proxy (./revproxy: httputil.ReverseProxy)
//	       mcpseal gateway, url route to the same server
//	       bare stdio-to-HTTP bridge (./bridge) in front of the stdio server
//	       mcpseal gateway, command route to the stdio server
//
// For each session it records the round trip per call and, for a proxy,
// the proxy process's own CPU time per call (utime+stime from
// /proc/PID/stat read just before and just after the measured calls;
// children, such as the server mcpseal runs, are excluded) and its peak
// RSS (VmHWM). It also times start-up to the first tools/list result, and
// a first session in front of a server listing 10,000 tools (about 10 MB)
// against the direct first listing. It prints the medians, the ratios (the
// median over alternations of each alternation's ratio), compares them
// with the targets and exits 1 when one is missed.
//
//	go run ./internal/benchtool                    # the full run (minutes)
//	go run ./internal/benchtool -calls 200 -rounds 2 -big-rounds 1   # a smoke run
//	go run ./internal/benchtool -json > bench.json
//	go run ./internal/benchtool -only stdio -cpuprofile /tmp/prof
//	go run ./internal/benchtool -only stdio -cpuprofile /tmp/cg -wrap \
//	    'env GODEBUG=asyncpreemptoff=1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=%N.out'
//
// mcpseal runs with its defaults in a fresh temporary MCPSEAL_HOME; one
// unmeasured session per gated path and generation pins first, so every
// measured session verifies. scripts/bench runs it. It is a benchmark, not
// a test: run it on a quiet machine, and read the ratios.
//
// Exit status: 0 every target met, 1 a target missed (or fewer than 5
// alternations: a smoke run is not a claim), 2 the benchmark could not
// run. With -cpuprofile or -pathclock, targets are not judged and the
// status is 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

type options struct {
	calls, warmup, rounds, tools int
	bigTools, bigRounds          int
	gens                         []generation
	only                         map[string]bool // stdio, http, big
	cpuSource                    string          // stat or sched
	jsonOut                      bool
	profileDir                   string
	pathClock                    bool // -pathclock
	telemetry                    bool
	wrap                         []string // -wrap: the measured stdio mcpseal sessions run under it
	baseline                     string   // -baseline: another mcpseal binary, measured beside this one
}

func main() {
	var o options
	flag.IntVar(&o.calls, "calls", 5000, "measured tools/call round trips per session")
	flag.IntVar(&o.warmup, "warmup", 50, "unmeasured tools/call round trips before them")
	flag.IntVar(&o.rounds, "rounds", 5, "alternations (sessions per path); targets need at least 5")
	flag.IntVar(&o.tools, "tools", 40, "tools the server lists")
	flag.IntVar(&o.bigTools, "big-tools", 10000, "tools the large server lists")
	flag.IntVar(&o.bigRounds, "big-rounds", 3, "alternations of the large-listing sessions")
	gen := flag.String("gen", "both", "protocol generations: both, 2026-07-28 or 2025-11-25")
	legacy := flag.Bool("legacy", false, "same as -gen 2025-11-25")
	only := flag.String("only", "stdio,http,big", "what to measure: a comma list of stdio, http, big")
	flag.StringVar(&o.cpuSource, "cpu", "stat", "CPU figure the ratios use: stat (utime+stime, 10 ms ticks) or sched (schedstat, ns)")
	flag.BoolVar(&o.jsonOut, "json", false, "print the report as JSON")
	flag.BoolVar(&o.telemetry, "telemetry", false, "also measure `mcpseal run` with Prometheus metrics and OTLP trace export on (issue 16)")
	flag.StringVar(&o.profileDir, "cpuprofile", "", "write a CPU profile of every measured mcpseal process to `DIR` (MCPSEAL_CPUPROFILE); figures are then not comparable and targets are not judged")
	flag.BoolVar(&o.pathClock, "pathclock", false, "time, inside the bare relay and every stdio `mcpseal run`, each frame's path: the gate's step, its hooks and the write (MCPSEAL_PATHCLOCK); targets are then not judged")
	flag.StringVar(&o.baseline, "baseline", "", "also measure `mcpseal run` of another mcpseal binary `BIN` (built from an earlier commit), in the same alternations, paired with this tree's: an A/B of a change; no target reads it")
	wrap := flag.String("wrap", "", "run each measured stdio `mcpseal run` session under this command prefix (split at spaces; %N is DIR/session), e.g. valgrind's cachegrind for instruction counts; needs -cpuprofile DIR, which then gets no pprof profiles but each session's stderr")
	flag.Parse()
	o.wrap = strings.Fields(*wrap)
	if *legacy {
		*gen = "2025-11-25"
	}
	for _, g := range generations {
		if *gen == "both" || *gen == g.name {
			o.gens = append(o.gens, g)
		}
	}
	o.only = map[string]bool{}
	for w := range strings.SplitSeq(*only, ",") {
		if w != "stdio" && w != "http" && w != "big" {
			usage("-only takes stdio, http and big")
		}
		o.only[w] = true
	}
	switch {
	case len(o.gens) == 0:
		usage("-gen takes both, 2026-07-28 or 2025-11-25")
	case o.calls < 1 || o.rounds < 1 || o.bigRounds < 1 || o.warmup < 0 || o.tools < 1 || o.bigTools < 1:
		usage("-calls, -rounds, -big-rounds, -tools and -big-tools must be positive")
	case o.cpuSource != "stat" && o.cpuSource != "sched":
		usage("-cpu takes stat or sched")
	case len(o.wrap) > 0 && o.profileDir == "":
		usage("-wrap needs -cpuprofile DIR")
	case flag.NArg() != 0:
		usage("no arguments")
	}
	rep, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtool:", err)
		os.Exit(2)
	}
	if o.jsonOut {
		err = writeJSON(os.Stdout, rep)
	} else {
		err = writeText(os.Stdout, rep)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtool:", err)
		os.Exit(2)
	}
	if !rep.Met && !rep.Profiling && !rep.Clocked {
		os.Exit(1)
	}
}

func usage(msg string) {
	fmt.Fprintln(os.Stderr, "benchtool:", msg)
	flag.Usage()
	os.Exit(2)
}

// binaries are the programs the benchmark builds, and its data files.
type binaries struct {
	mcpseal, sdkserver, relay, revproxy, bridge, upstream string
	defs, bigDefs                                         string
	defsBytes, bigDefsBytes                               int
}

func build(dir string, o options) (*binaries, error) {
	bin := filepath.Join(dir, "bin")
	b := &binaries{}
	for pkg, dst := range map[string]*string{
		"./cmd/mcpseal":                    &b.mcpseal,
		"./internal/testmcp/cmd/sdkserver": &b.sdkserver,
		"./internal/benchtool/relay":       &b.relay,
		"./internal/benchtool/revproxy":    &b.revproxy,
		"./internal/benchtool/bridge":      &b.bridge,
		"./internal/benchtool/upstream":    &b.upstream,
	} {
		*dst = filepath.Join(bin, filepath.Base(pkg))
		// Built as a release is (internal/releasebuild): static, trimmed,
		// without symbols, so the figures are those of the binary users
		// run. A cgo build maps libc and ld.so too: about 1.5 MiB more RSS.
		ldflags := "-ldflags=-s -w -buildid="
		if len(o.wrap) > 0 {
			ldflags = "-ldflags=-buildid=" // a profiler under -wrap reads the symbols
		}
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", ldflags, "-o", *dst, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	var err error
	b.defs = filepath.Join(dir, "tools.json")
	if b.defsBytes, err = writeDefs(b.defs, o.tools, 3); err != nil {
		return nil, err
	}
	if o.only["big"] {
		b.bigDefs = filepath.Join(dir, "tools-big.json")
		if b.bigDefsBytes, err = writeDefs(b.bigDefs, o.bigTools, 8); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// profiler names the CPU profile file of each measured mcpseal session.
type profiler struct{ dir string }

func (p *profiler) file(key string, g generation, round int) string {
	if p.dir == "" {
		return ""
	}
	return filepath.Join(p.dir, fmt.Sprintf("%s-%s-%d.pprof", key, g.name, round))
}

func run(o options) (*report, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	dir, err := os.MkdirTemp("", "mcpseal-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	prof := &profiler{}
	if o.profileDir != "" {
		if prof.dir, err = filepath.Abs(o.profileDir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(prof.dir, 0o755); err != nil {
			return nil, err
		}
	}
	rep := newReport(o)
	b, err := build(dir, o)
	if err != nil {
		return nil, err
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	var stdio, web []path
	if o.only["stdio"] {
		stdio = stdioPaths(b, home)
		if o.telemetry {
			col, err := startCollector()
			if err != nil {
				return nil, err
			}
			defer col.stop()
			stdio = append(stdio, metricsPath(b, home), observedPath(b, home, col.url), againPath(b, home))
		}
		if o.baseline != "" {
			stdio = append(stdio, baselinePath(o.baseline, b, home))
		}
	}
	if o.only["http"] {
		up, err := startServer([]string{b.upstream, b.defs}, environ(home, ""))
		if err != nil {
			return nil, err
		}
		defer up.stop()
		if web, err = httpPaths(b, dir, home, up.url); err != nil {
			return nil, err
		}
	}
	for _, g := range o.gens {
		gr := &genResult{Protocol: g.name}
		rep.Generations = append(rep.Generations, gr)
		// Pin first: one unmeasured session per gated path.
		for _, p := range slices.Concat(stdio, web) {
			if p.mcpseal {
				if _, err := measure(ctx, p, g, 1, 0, launch{}); err != nil {
					return nil, fmt.Errorf("%s: pinning session: %w", g.name, err)
				}
			}
		}
		gr.Stdio = newResults(stdio)
		gr.HTTP = newResults(web)
		for r := range o.rounds {
			for _, group := range []struct {
				paths []path
				res   []*pathResult
			}{{stdio, gr.Stdio}, {web, gr.HTTP}} {
				for _, i := range rotation(len(group.paths), r) {
					p := group.paths[i]
					l := launch{wrap: o.wrap}
					if p.mcpseal {
						l.profile = prof.file(p.key, g, r)
					}
					if o.pathClock {
						l.clock = filepath.Join(dir, fmt.Sprintf("%s-%s-%d.clock.json", p.key, g.name, r))
					}
					s, err := measure(ctx, p, g, o.calls, o.warmup, l)
					if err != nil {
						return nil, fmt.Errorf("%s, alternation %d: %w", g.name, r+1, err)
					}
					group.res[i].add(s, o.calls)
				}
			}
			progress("%s: alternation %d of %d done", g.name, r+1, o.rounds)
		}
		if o.only["big"] {
			if gr.Big, err = runBig(ctx, b, dir, g, o.bigRounds, prof); err != nil {
				return nil, fmt.Errorf("%s: %w", g.name, err)
			}
			progress("%s: 10k-tool sessions done", g.name)
		}

	}
	rep.judge(o)
	return rep, nil
}

// progress writes a line to stderr, so that a long run shows it is alive.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchtool: "+format+"\n", args...)
}

// rotation is the order of n paths in alternation r: each path takes each
// place in turn.
func rotation(n, r int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = (i + r) % n
	}
	return order
}

func stdioPaths(b *binaries, home string) []path {
	server := []string{b.sdkserver, b.defs}
	return []path{
		stdioPath("stdio.direct", "direct", server, home, false, false),
		stdioPath("stdio.relay", "bare relay", append([]string{b.relay}, server...), home, true, false),
		stdioPath("stdio.mcpseal", "mcpseal run", append([]string{b.mcpseal, "run", "--name", "bench", "--"}, server...), home, true, true),
	}
}

// httpPaths are the HTTP paths to the upstream at upURL and to sdkserver.
// The gateway runs with its defaults and --no-token, as the issue asks
// (the floors check no token either).
func httpPaths(b *binaries, dir, home, upURL string) ([]path, error) {
	routes := fmt.Sprintf(`{"routes": {
  "url-modern": {"url": %q, "private": true},
  "url-legacy": {"url": %q, "private": true},
  "cmd": {"command": [%q, %q], "name": "bench-cmd"}}}`, upURL+"/stateless", upURL+"/mcp", b.sdkserver, b.defs)
	rf := filepath.Join(dir, "routes.json")
	if err := os.WriteFile(rf, []byte(routes), 0o600); err != nil {
		return nil, err
	}
	gateway := func(profile string) (*server, error) {
		return startServer([]string{b.mcpseal, "gateway", "--routes", rf, "--port", "0", "--no-token"}, environ(home, profile))
	}
	plain := func(argv ...string) func(string) (*server, error) {
		return func(string) (*server, error) { return startServer(argv, environ(home, "")) }
	}
	return []path{
		httpPath("http.direct", "direct", false, nil, func(g generation) string { return upURL + g.upstreamPath }),
		httpPath("http.revproxy", "bare reverse proxy", false, plain(b.revproxy, upURL), func(g generation) string { return g.upstreamPath }),
		httpPath("http.gateway-url", "gateway url route", true, gateway, func(g generation) string { return "/" + g.urlRoute }),
		httpPath("http.bridge", "bare stdio bridge", false, plain(b.bridge, b.sdkserver, b.defs), func(generation) string { return "/mcp" }),
		httpPath("http.gateway-cmd", "gateway command route", true, gateway, func(generation) string { return "/cmd" }),
	}, nil
}

// hostInfo describes the machine for the report.
func hostInfo() (goVersion string, cpus int, load string) {
	load = "unknown"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			load = strings.Join(f[:3], " ")
		}
	}
	return runtime.Version(), runtime.NumCPU(), load
}
