// Package crawl fills a transparency log (package tlog) with the contracts
// of public MCP servers: it discovers npm packages (registry search by
// keyword, a seed list), installs each exact version without running any
// install script, starts it, reads everything it shows a model
// (initialize, every page of every listing; never a tool call), and
// appends an entry only when the server's contract changed. Servers that
// are not working servers (libraries, servers that need credentials,
// crashes) get a failure reason in the liveness record and no entry.
//
// Politeness: a registry package is probed at most once a day (local
// commands from a seed list on every run), registry requests go one at a
// time with a pause between them and a User-Agent that says who is
// asking, probes run with bounded concurrency, time and output. A crawl
// is resumable: every probe's outcome is recorded as it completes, and a
// new run skips what was checked within the day.
//
// Confinement: servers start through a Launcher. DirectLauncher, the
// only one today, runs them as plain child processes with an empty
// environment and a throwaway HOME, but with the crawler's network and
// files: it is not a sandbox. A sandboxed launcher (no network, read-only
// package) plugs in through the same interface.
package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcpseal/mcpseal/tlog"
)

// Defaults for Config's zero fields.
const (
	DefaultConcurrency  = 2
	DefaultProbeTimeout = 30 * time.Second
	DefaultMinInterval  = 250 * time.Millisecond
	DefaultRevisit      = 24 * time.Hour
	DefaultRegistry     = "https://registry.npmjs.org/"
)

// DefaultKeywords are the npm keywords searched.
var DefaultKeywords = []string{"mcp", "mcp-server", "modelcontextprotocol"}

// Config says what to crawl and where to record it.
type Config struct {
	// Log is the log folder; Writer appends to it with the log's key.
	Log    tlog.Storage
	Writer *tlog.Writer
	// Registry is the npm registry's URL; Search turns on discovery by
	// Keywords.
	Registry string
	HTTP     *http.Client
	Search   bool
	Keywords []string
	// Seed lists servers to probe on every run (registry packages still
	// at most once a day).
	Seed []Target
	// OptOut holds identities never to probe.
	OptOut map[string]bool
	// Limit bounds the registry packages considered in one run (0: no
	// bound).
	Limit        int
	Concurrency  int
	ProbeTimeout time.Duration
	MinInterval  time.Duration
	Revisit      time.Duration
	// CacheDir holds unpacked packages and throwaway homes.
	CacheDir string
	Launcher Launcher
	Deps     DepInstaller
	Now      func() time.Time
	// Progress, when set, is called after each server.
	Progress func(Progress)
}

// Progress is the state of a running crawl.
type Progress struct {
	Done, Total                     int
	New, Changed, Unchanged, Failed int
	Elapsed                         time.Duration
}

// SummaryVersion is the version of Summary's JSON.
const SummaryVersion = 1

// A Summary tells what a crawl did.
type Summary struct {
	Version  int       `json:"version"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Confined reports whether servers ran in a sandbox.
	Confined    bool `json:"confined"`
	Interrupted bool `json:"interrupted"`
	Discovered  int  `json:"discovered"`
	OptedOut    int  `json:"optedOut"`
	// Recent counts registry packages skipped because they were checked
	// within the revisit interval.
	Recent    int            `json:"recent"`
	Probed    int            `json:"probed"`
	New       int            `json:"new"`
	Changed   int            `json:"changed"`
	Unchanged int            `json:"unchanged"`
	Failures  map[string]int `json:"failures"`
	Log       struct {
		Origin string    `json:"origin"`
		Size   int64     `json:"size"`
		Root   tlog.Hash `json:"root"`
	} `json:"log"`
}

func (c *Config) defaults() {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = DefaultProbeTimeout
	}
	if c.MinInterval < 0 {
		c.MinInterval = 0
	}
	if c.Revisit <= 0 {
		c.Revisit = DefaultRevisit
	}
	if c.Keywords == nil {
		c.Keywords = DefaultKeywords
	}
	if c.HTTP == nil {
		c.HTTP = &http.Client{Timeout: 2 * time.Minute}
	}
	if c.Launcher == nil {
		c.Launcher = DirectLauncher{}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Run crawls once. It verifies the log before touching it and records
// each server's outcome as it completes; when ctx ends it stops starting
// servers, records what finished, and returns a summary marked
// Interrupted.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	cfg.defaults()
	v, err := tlog.Verify(cfg.Log, tlog.VerifyOptions{Key: cfg.Writer.Key()})
	if err != nil {
		return nil, err
	}
	live, err := tlog.ReadLiveness(cfg.Log)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Version: SummaryVersion, Started: cfg.Now().UTC(), Confined: cfg.Launcher.Confined(), Failures: map[string]int{}}
	var npm *npmClient
	if cfg.Registry != "" {
		if npm, err = newNPMClient(cfg.Registry, cfg.HTTP, cfg.MinInterval); err != nil {
			return nil, err
		}
	}
	targets, err := discover(ctx, &cfg, npm, sum)
	if err != nil {
		return nil, err
	}
	var todo []Target
	for _, t := range targets {
		if l := live.Servers[t.ID]; !t.Local() && l != nil && cfg.Now().Sub(l.Checked) < cfg.Revisit {
			sum.Recent++
			continue
		}
		todo = append(todo, t)
	}
	rec := &recorder{cfg: &cfg, v: v, live: live, sum: sum}
	work := make(chan Target)
	results := make(chan outcome)
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				results <- probeTarget(ctx, &cfg, npm, t)
			}
		}()
	}
	go func() {
		defer close(work)
		for _, t := range todo {
			select {
			case work <- t:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	start := time.Now()
	var recErr error
	for o := range results {
		if o.skipped {
			continue
		}
		if err := rec.record(o); err != nil && recErr == nil {
			recErr = err
		}
		if cfg.Progress != nil {
			cfg.Progress(Progress{Done: sum.Probed, Total: len(todo), New: sum.New, Changed: sum.Changed,
				Unchanged: sum.Unchanged, Failed: sum.Probed - sum.New - sum.Changed - sum.Unchanged, Elapsed: time.Since(start)})
		}
	}
	if recErr != nil {
		return nil, recErr
	}
	sum.Interrupted = ctx.Err() != nil
	sum.Finished = cfg.Now().UTC()
	if !sum.Interrupted {
		live.LastCrawl = &sum.Finished
		if err := tlog.WriteLiveness(cfg.Log, live); err != nil {
			return nil, err
		}
	}
	cur, err := cfg.Writer.Current()
	if err != nil {
		return nil, err
	}
	sum.Log.Origin, sum.Log.Size, sum.Log.Root = cur.Origin, cur.Size, cur.Root
	return sum, nil
}

// discover lists the run's targets: the seed list, then the registry's
// search results, without opted-out servers, at most Limit registry
// packages.
func discover(ctx context.Context, cfg *Config, npm *npmClient, sum *Summary) ([]Target, error) {
	var out []Target
	seen := map[string]bool{}
	registry := 0
	add := func(t Target) {
		if seen[t.ID] {
			return
		}
		seen[t.ID] = true
		if cfg.OptOut[t.ID] {
			sum.OptedOut++
			return
		}
		if !t.Local() {
			if cfg.Limit > 0 && registry >= cfg.Limit {
				return
			}
			registry++
		}
		sum.Discovered++
		out = append(out, t)
	}
	for _, t := range cfg.Seed {
		if !t.Local() && npm == nil {
			return nil, errors.New("the seed list names registry packages but no registry is configured")
		}
		add(t)
	}
	if cfg.Search && npm != nil {
		for _, kw := range cfg.Keywords {
			want := 0
			if cfg.Limit > 0 {
				want = cfg.Limit - registry
				if want <= 0 {
					break
				}
			} else {
				want = 10000
			}
			n, err := npm.search(ctx, "keywords:"+kw, want+len(cfg.OptOut))
			if err != nil {
				return nil, fmt.Errorf("searching the registry for keyword %s: %w", kw, err)
			}
			for _, name := range n {
				add(Target{ID: "npm:" + name, Package: name})
			}
		}
	}
	return out, nil
}
