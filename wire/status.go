package wire

import (
	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// State is how well a server is covered.
type State string

// The states status reports. Only Protected counts as protection.
const (
	// Protected: launched through mcpseal run under guard or strict.
	Protected State = "protected"
	// MonitorOnly: launched through mcpseal with --posture monitor, which
	// records drift and forwards it. Never counted as protection.
	MonitorOnly State = "monitor-only"
	// NotWrapped: the client launches or reaches the server directly.
	NotWrapped State = "not-wrapped"
	// Broken: the launch line names mcpseal but mcpseal would refuse it
	// (or the binary it names is gone): the server does not start at all.
	Broken State = "broken"
	// BaselineOutside: the entry points MCPSEAL_HOME somewhere else, so its
	// pins live where `mcpseal status`, list and review do not look.
	BaselineOutside State = "baseline-outside"
)

// ServerStatus is one server's coverage.
type ServerStatus struct {
	Client  string `json:"client"`
	File    string `json:"file"`
	Project bool   `json:"project,omitempty"`
	// Source names the extension or plugin the server comes from.
	Source string `json:"source,omitempty"`
	Scope  string `json:"scope"`
	Name   string `json:"name"`
	Kind   Kind   `json:"kind"`
	State  State  `json:"state"`
	Reason string `json:"reason,omitempty"`
	// Posture and Lock are read from a wrapped launch line.
	Posture  string `json:"posture,omitempty"`
	Lock     string `json:"lock,omitempty"`
	Disabled bool   `json:"disabled,omitempty"`
}

// FileStatus is one config file read.
type FileStatus struct {
	File
	// Error says why the file could not be read; its servers are unknown.
	Error   string `json:"error,omitempty"`
	Servers int    `json:"servers"`
}

// Report is the result of Status.
type Report struct {
	Files   []FileStatus   `json:"files"`
	Servers []ServerStatus `json:"servers"`
}

// Enforcing reports whether everything found is protected: every server,
// and no file that could not be read.
func (r *Report) Enforcing() bool {
	for _, f := range r.Files {
		if f.Error != "" {
			return false
		}
	}
	for _, s := range r.Servers {
		if s.State != Protected {
			return false
		}
	}
	return true
}

// Status reads files and says, for each server, how it is covered.
func Status(files []File, o Options) *Report {
	r := &Report{Files: []FileStatus{}, Servers: []ServerStatus{}}
	for _, f := range files {
		fs := FileStatus{File: f}
		if f.err != "" {
			fs.Error = f.err
			r.Files = append(r.Files, fs)
			continue
		}
		src, err := atomicfile.ReadFileFollow(f.Path, maxConfigSize)
		var doc document
		if err == nil {
			doc, err = parseDocument(f, src)
		}
		if err != nil {
			fs.Error = err.Error()
			r.Files = append(r.Files, fs)
			continue
		}
		for _, de := range doc.entries() {
			r.Servers = append(r.Servers, serverStatus(f, &de.Entry, o))
			fs.Servers++
		}
		r.Files = append(r.Files, fs)
	}
	return r
}

func serverStatus(f File, e *Entry, o Options) ServerStatus {
	if e.source != "" {
		f.Source = e.source
	}
	s := ServerStatus{Client: f.Client, File: f.Path, Project: f.Project, Source: f.Source, Scope: e.Scope, Name: e.Name, Kind: e.Kind, Disabled: e.Disabled || f.Disabled}
	if f.NoWrap != "" && !launchesMcpseal(e, o) {
		s.State, s.Reason = NotWrapped, f.NoWrap
		return s
	}
	switch e.Kind {
	case Other:
		s.State, s.Reason = NotWrapped, e.Why
		return s
	case Remote:
		s.State, s.Reason = NotWrapped, "remote server the client reaches directly"
		return s
	}
	l := readLaunch(e.Command, e.Args, o.Self, o.Run)
	switch {
	case !l.Wrapped:
		s.State, s.Reason = NotWrapped, "launched without mcpseal"
		return s
	case l.Err != nil:
		s.State, s.Reason = Broken, "mcpseal would refuse this launch line: "+l.Err.Error()
		return s
	}
	s.Posture, s.Lock = l.Line.Posture, l.Line.Lock
	if l.Line.URL != "" {
		s.Kind = Remote
	}
	if filepath.IsAbs(e.Command) && filepath.Clean(e.Command) != filepath.Clean(o.Self) {
		if _, err := os.Stat(e.Command); err != nil {
			s.State, s.Reason = Broken, "the mcpseal binary it names is not there (run 'mcpseal wrap' to point it at this one)"
			return s
		}
	}
	// An npx launch names a release by exact version, whose binary the
	// npm launcher checks against the digest recorded in that release
	// (docs/release.md); it is not this file and cannot be compared.
	if ok, why := isThisBinary(e.Command, e.Env, o.Self); !ok && l.NPX == "" {
		// A file named mcpseal proves nothing: a project or a plugin may
		// ship its own.
		s.State, s.Reason = NotWrapped, "names an mcpseal that is not this one: "+why+" (run 'mcpseal wrap' to point it at this one)"
		return s
	}
	if l.NPX != "" {
		// npx resolves mcpseal@X from the folder the client starts the
		// server in before the registry: a project's node_modules/mcpseal
		// (or its .npmrc registry) supplies another program, and the
		// launcher's digest check with it.
		s.State, s.Reason = BaselineOutside, "npx resolves mcpseal@"+l.NPX+" from the folder the client starts it in (a project's node_modules or .npmrc can supply another); status cannot vouch for it: name this binary instead"
		return s
	}
	if st, why := stateHome(e, l.Line, o); st != "" {
		s.State, s.Reason = st, why
		return s
	}
	if k := trustEnv(e.Env); k != "" {
		s.State, s.Reason = BaselineOutside, "its environment sets "+k+": the lock's trusted keys or the package registry are not the ones status sees"
		return s
	}
	if l.Line.LockHostConfig != "" {
		s.State, s.Reason = BaselineOutside, "its --lock-host-config names trusted keys status does not see"
		return s
	}
	if l.Line.Policy != "" && f.Source != "" {
		// A plugin's author may not choose the host policy.
		s.State, s.Reason = BaselineOutside, "its --policy, chosen by the extension or plugin, replaces "+filepath.Join(o.Home, "policy.json")
		return s
	}
	if s.Posture == "monitor" {
		s.State, s.Reason = MonitorOnly, "posture monitor reports drift and forwards it: not protection"
		return s
	}
	s.State = Protected
	if !l.Line.HasName {
		s.Reason = "identified by its command line (no --name)"
	}
	if s.Lock != "" && !filepath.IsAbs(s.Lock) {
		s.Reason = "lock path is relative: read from the folder the client starts the server in"
	}
	if l.Line.Policy != "" {
		s.Reason = "its --policy replaces " + filepath.Join(o.Home, "policy.json")
	}
	return s
}

// stateHome checks where a wrapped line keeps its pins: the folder its
// --home names, else its entry's MCPSEAL_HOME, else whatever the client
// passes on. It returns BaselineOutside and why when that may not be
// o.Home, and "" when it is.
func stateHome(e *Entry, l RunLine, o Options) (State, string) {
	if l.Home != "" {
		if filepath.Clean(l.Home) != filepath.Clean(o.Home) {
			return BaselineOutside, "its --home keeps the pins outside " + o.Home
		}
		return "", ""
	}
	if h, ok := e.Env["MCPSEAL_HOME"]; ok {
		if filepath.Clean(h) != filepath.Clean(o.Home) {
			return BaselineOutside, "its MCPSEAL_HOME keeps the pins outside " + o.Home
		}
		return "", ""
	}
	if _, ok := e.Env["HOME"]; ok {
		return BaselineOutside, "its HOME decides where the pins are kept (no --home on the launch line; run 'mcpseal wrap' to add it)"
	}
	if o.DefaultHome != "" && filepath.Clean(o.DefaultHome) != filepath.Clean(o.Home) {
		return BaselineOutside, "no --home on the launch line: a client that does not pass MCPSEAL_HOME on (Codex filters the environment) keeps the pins in " +
			o.DefaultHome + ", not " + o.Home + " (run 'mcpseal wrap' to add --home)"
	}
	return "", ""
}

// launchesMcpseal reports whether a stdio entry's line starts mcpseal run
// (a plugin's author may ship it wrapped; status then judges the line).
func launchesMcpseal(e *Entry, o Options) bool {
	return e.Kind == Stdio && readLaunch(e.Command, e.Args, o.Self, o.Run).Wrapped
}

// trustEnv names the first variable an entry's environment sets that
// changes what mcpseal trusts: the lock's host config (its signing keys)
// or the registries package pins are checked against.
func trustEnv(env map[string]string) string {
	for _, k := range []string{"MCPSEAL_LOCK_HOST_CONFIG", "MCPSEAL_NPM_REGISTRY", "MCPSEAL_PYPI_URL"} {
		if _, ok := env[k]; ok {
			return k
		}
	}
	// The dynamic loader's and Node's variables run someone's code in
	// mcpseal (a cgo build) or in the npm launcher before mcpseal's own
	// checks: LD_PRELOAD, DYLD_INSERT_LIBRARIES, NODE_OPTIONS=--require,
	// npm_config_registry.
	for _, k := range sortedEnvKeys(env) {
		u := strings.ToUpper(k)
		if strings.HasPrefix(u, "LD_") || strings.HasPrefix(u, "DYLD_") || strings.HasPrefix(u, "NPM_CONFIG_") || u == "NODE_OPTIONS" || u == "NODE_PATH" {
			return k
		}
	}
	return ""
}

func sortedEnvKeys(env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
