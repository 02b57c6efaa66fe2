package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mcpseal/mcpseal/crawl"
	"github.com/mcpseal/mcpseal/launch"
)

func init() { register(newCrawlCmd) }

type crawlOpts struct {
	logDir, seed, optOut, registry, cache string
	sources                               []string
	limit, concurrency                    int
	timeout                               time.Duration
	asJSON                                bool
	noSandbox                             bool
}

func newCrawlCmd(e *env) *cobra.Command {
	var o crawlOpts
	cmd := &cobra.Command{
		Use:   "crawl --log DIR [--source npm] [--seed FILE] [--limit N] [--json]",
		Short: "Probe public MCP servers and record contract changes in a transparency log",
		Long: `Discover MCP servers (the npm registry's search with --source npm, and/or a
seed list), install each exact package version without running any install
script, start it, read everything it shows a model (never calling a tool),
and append a log entry only when its contract changed. Packages that are
not working servers get a failure reason in DIR/liveness.json and no
entry. A registry package is probed at most once a day; an interrupted
crawl resumes where it stopped. Each probed server runs in the Linux
sandbox (a launch profile made for it: the interpreter and the package
pinned by digest, no network, read-only access to its own files, limits);
a probe that cannot be confined is not started. --no-sandbox runs them as
plain child processes, with the crawler's network and files (see
docs/crawler.md).`,
		Args: exactArgs(0, "no arguments (use flags)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.logDir == "" {
				return &usageError{errors.New("crawl needs --log DIR (create one with 'mcpseal log init')")}
			}
			for _, s := range o.sources {
				if s != "npm" {
					return &usageError{fmt.Errorf("unknown --source %q: the sources are npm", contractSafe(s))}
				}
			}
			if len(o.sources) == 0 && o.seed == "" {
				return &usageError{errors.New("nothing to crawl: give --source npm, --seed FILE, or both")}
			}
			if o.limit < 0 || o.concurrency < 0 || o.concurrency > 16 {
				return &usageError{errors.New("--limit must be 0 or more and --concurrency 1 to 16")}
			}
			return runCrawl(e, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.logDir, "log", "", "the log folder to append to (this machine holds its key)")
	f.StringArrayVar(&o.sources, "source", nil, "discover servers from a source: npm (repeatable)")
	f.StringVar(&o.seed, "seed", "", "a seed list of packages and local commands (JSON)")
	f.StringVar(&o.optOut, "opt-out", "", "servers never to probe, one package name or identity a line")
	f.IntVar(&o.limit, "limit", 0, "at most this many registry packages (0: no limit)")
	f.StringVar(&o.registry, "registry", crawl.DefaultRegistry, "the npm registry")
	f.IntVar(&o.concurrency, "concurrency", crawl.DefaultConcurrency, "servers probed at once")
	f.DurationVar(&o.timeout, "timeout", crawl.DefaultProbeTimeout, "time allowed for one server's probe")
	f.StringVar(&o.cache, "cache", "", "where packages are unpacked (default $MCPSEAL_HOME/crawl-cache)")
	f.BoolVar(&o.asJSON, "json", false, "print the summary as JSON")
	f.BoolVar(&o.noSandbox, "no-sandbox", false, "run probed servers unconfined, with the crawler's network and files (not for untrusted packages)")
	return cmd
}

func contractSafe(s string) string {
	if len(s) > 32 {
		s = s[:32]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '_'
		}
		return r
	}, s)
}

func runCrawl(e *env, o crawlOpts) error {
	home, err := mcpsealHome(e)
	if err != nil {
		return err
	}
	cfg := crawl.Config{Registry: o.registry, Search: len(o.sources) > 0, Limit: o.limit,
		Concurrency: o.concurrency, ProbeTimeout: o.timeout, MinInterval: crawl.DefaultMinInterval}
	if o.seed != "" {
		b, err := readLimited(o.seed, crawl.MaxSeedFile)
		if err != nil {
			return err
		}
		if cfg.Seed, err = crawl.ParseSeed(b, seedFolder(o.seed)); err != nil {
			return err
		}
	}
	if o.optOut != "" {
		b, err := readLimited(o.optOut, crawl.MaxOptOutFile)
		if err != nil {
			return err
		}
		if cfg.OptOut, err = crawl.ParseOptOut(b); err != nil {
			return err
		}
	}
	cfg.CacheDir = o.cache
	if cfg.CacheDir == "" {
		cfg.CacheDir = filepath.Join(home, "crawl-cache")
	}
	if err := os.MkdirAll(cfg.CacheDir, 0o700); err != nil {
		return err
	}
	cfg.Deps = crawl.NPMInstaller{CacheDir: cfg.CacheDir}
	if !o.noSandbox {
		cfg.Launcher = crawl.SandboxLauncher{Events: func(ev launch.Event) { fmt.Fprintf(e.stderr, "mcpseal: probe: %s\n", ev) }}
	}
	d, w, err := openLogWriter(e, o.logDir)
	if err != nil {
		return err
	}
	defer d.Close()
	cfg.Log, cfg.Writer = d, w
	if f, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && !o.asJSON {
		bar := &progressBar{w: e.stderr}
		cfg.Progress = bar.show
		defer bar.done()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := crawl.Run(ctx, cfg)
	if err != nil {
		return withHint(err, "if the log does not verify, run 'mcpseal log verify %s --key FILE'; if the registry offers no search, list packages in a --seed file", o.logDir)
	}
	if !sum.Confined {
		fmt.Fprintln(e.stderr, "mcpseal: warning: servers ran without a sandbox (their own network and files); see docs/crawler.md")
	}
	if o.asJSON {
		if err := writeJSON(e.stdout, sum); err != nil {
			return err
		}
	} else {
		printCrawlSummary(e.stdout, sum)
	}
	if sum.Interrupted {
		return exitWith(ExitFailure, errors.New("interrupted; run the same command again to resume"))
	}
	return nil
}

func seedFolder(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Dir(p)
	}
	return filepath.Dir(abs)
}

func printCrawlSummary(w io.Writer, s *crawl.Summary) {
	failed := s.Probed - s.New - s.Changed - s.Unchanged
	fmt.Fprintf(w, "probed %d servers in %s: %d new, %d changed, %d unchanged, %d failed\n",
		s.Probed, s.Finished.Sub(s.Started).Round(time.Second), s.New, s.Changed, s.Unchanged, failed)
	if failed > 0 {
		var codes []string
		for c := range s.Failures {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		for _, c := range codes {
			fmt.Fprintf(w, "  %-22s %d\n", c, s.Failures[c])
		}
	}
	fmt.Fprintf(w, "skipped %d checked within a day, %d opted out; discovered %d\n", s.Recent, s.OptedOut, s.Discovered)
	fmt.Fprintf(w, "log %s: %d entries, root %s\n", s.Log.Origin, s.Log.Size, s.Log.Root)
}

// progressBar draws "[#####-----] 12/25  3 new  1 changed  8 failed  0.8/s"
// on one terminal line.
type progressBar struct {
	w     io.Writer
	drawn bool
}

func (b *progressBar) show(p crawl.Progress) {
	const width = 30
	filled := 0
	if p.Total > 0 {
		filled = width * p.Done / p.Total
	}
	rate := 0.0
	if s := p.Elapsed.Seconds(); s > 0 {
		rate = float64(p.Done) / s
	}
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d  %d new  %d changed  %d unchanged  %d failed  %.1f/s ",
		strings.Repeat("#", filled), strings.Repeat("-", width-filled), p.Done, p.Total, p.New, p.Changed, p.Unchanged, p.Failed, rate)
	b.drawn = true
}

func (b *progressBar) done() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}
