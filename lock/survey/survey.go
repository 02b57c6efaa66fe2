// Package survey looks at every local server of a project's MCP config
// the way `mcpseal lock` and `mcpseal lock --check` need: it reads the
// config, pins each server's package against its registry, starts each
// server with the probe and compares what it finds with a lock.
//
// It is the only place that composes the config reader (mcpconfig), the
// package pins (pkgpin), the probe and the lock format; each of those
// knows nothing of the others.
//
// # Example
//
//	s := &survey.Survey{ConfigPath: ".mcp.json", Registry: pkgpin.RegistryFromEnv(os.Getenv)}
//	targets, err := s.Targets()
//	findings := s.Check(ctx, targets, l) // l from lock.ReadFile
//	// each Finding: Server, Code ("definitions-changed"...), Fail, Message
package survey

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/lock"
	"github.com/mcpseal/mcpseal/mcpconfig"
	"github.com/mcpseal/mcpseal/pkgpin"
	"github.com/mcpseal/mcpseal/probe"
)

// Survey holds what every step needs.
type Survey struct {
	// ConfigPath is the MCP config to read.
	ConfigPath string
	// Registry resolves and checks package pins.
	Registry *pkgpin.Registry
	// Lookup reads the environment for ${VAR} expansion (os.LookupEnv
	// when nil); Environ is the environment servers start with
	// (os.Environ() when nil), to which each server's env is added.
	Lookup  func(string) (string, bool)
	Environ []string
	// ProbeTimeout bounds each server's probe (probe.DefaultTimeout when
	// zero).
	ProbeTimeout time.Duration
	// DefinitionsOnly locks a registry launch whose package cannot be
	// pinned (an image without a digest, a package the registry will not
	// show) by its definitions alone, instead of failing.
	DefinitionsOnly bool
	// Probe starts a server and reads its contract (probe.Probe when nil).
	Probe func(context.Context, probe.Config) (*probe.Result, error)
}

// Target is one server of the config.
type Target struct {
	Name string
	// Server is the entry as written, unwrapped when mcpseal already
	// wraps it.
	Server mcpconfig.Server
	// Command is the command identity a lock records.
	Command lock.Command
	// Launch is the registry launch, nil when the command is not one.
	Launch *pkgpin.Launch
	// Expanded is the server ready to start.
	Expanded *mcpconfig.Expanded
	// Remote is true for a server reached over the network; those are
	// not locked in this release.
	Remote bool
	// Err is why the entry cannot be used (expansion, an unlockable
	// launch, a wrapper that names another server).
	Err error
}

// Targets reads the config and prepares every server, sorted by name.
func (s *Survey) Targets() ([]Target, error) {
	cfg, err := mcpconfig.Load(s.ConfigPath)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(s.ConfigPath))
	if err != nil {
		return nil, err
	}
	workspace := dir
	if filepath.Base(dir) == ".vscode" {
		workspace = filepath.Dir(dir)
	}
	var out []Target
	for _, srv := range cfg.Servers {
		out = append(out, s.target(srv, workspace))
	}
	return out, nil
}

func (s *Survey) target(srv mcpconfig.Server, workspace string) Target {
	t := Target{Name: srv.Name, Server: srv}
	if err := lock.CheckServerName(srv.Name); err != nil {
		t.Err = err
		return t
	}
	if !srv.Local() {
		t.Remote = true
		return t
	}
	inner, w, err := srv.Unwrap()
	if err != nil {
		t.Err = err
		return t
	}
	if w != nil && w.Name != "" && w.Name != srv.Name {
		t.Err = fmt.Errorf("the entry wraps the server with mcpseal run --name %q; a lock names servers by their config key, %q", w.Name, srv.Name)
		return t
	}
	t.Server = inner
	t.Command = lock.NewCommand(inner.Command, inner.Args, inner.Cwd, inner.Env)
	lookup := s.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	x, err := inner.Expand(mcpconfig.Env{Lookup: lookup, Workspace: workspace})
	if err != nil {
		t.Err = err
		return t
	}
	if x.Cwd == "" {
		x.Cwd = workspace
	} else if !filepath.IsAbs(x.Cwd) {
		x.Cwd = filepath.Join(workspace, x.Cwd)
	}
	t.Expanded = x
	t.Launch, t.Err = pkgpin.Recognize(x.Argv)
	return t
}

// environ is the environment a target's server starts with.
func (s *Survey) environ(t *Target) []string {
	env := s.Environ
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+len(t.Expanded.Env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, override := t.Expanded.Env[name]; !override {
			out = append(out, kv)
		}
	}
	for _, k := range sortedKeys(t.Expanded.Env) {
		out = append(out, k+"="+t.Expanded.Env[k])
	}
	return out
}

// probe starts the target's server with argv and reads its contract.
func (s *Survey) probe(ctx context.Context, t *Target, argv []string) (*probe.Result, error) {
	run := s.Probe
	if run == nil {
		run = probe.Probe
	}
	return run(ctx, probe.Config{Argv: argv, Env: s.environ(t), Dir: t.Expanded.Cwd, Timeout: s.ProbeTimeout})
}

// Observe pins the target's package (resolving tags and latest now) and
// probes exactly that version. old is the server's previous entry, kept
// when the package cannot be pinned and the survey is DefinitionsOnly.
func (s *Survey) Observe(ctx context.Context, t *Target) (lock.Observation, error) {
	obs := lock.Observation{Command: t.Command}
	if t.Err != nil {
		return obs, t.Err
	}
	argv := t.Expanded.Argv
	if t.Launch != nil {
		pkg, err := s.Registry.Resolve(ctx, t.Launch)
		switch {
		case err == nil:
			if argv, err = pkgpin.Rewrite(argv, pkg); err != nil {
				return obs, err
			}
			obs.Package = pkg
		case s.DefinitionsOnly:
			obs.DefinitionsOnly = true
		case errors.Is(err, pkgpin.ErrNotLockable):
			return obs, fmt.Errorf("%w (or lock its definitions alone with --definitions-only)", err)
		default:
			return obs, fmt.Errorf("pinning %s: %w (a package the registry will not show without credentials can be locked with --definitions-only)", t.Launch, err)
		}
	}
	res, err := s.probe(ctx, t, argv)
	if err != nil {
		return obs, err
	}
	obs.Contract = res.Contract
	return obs, nil
}
