package policy

import (
	"fmt"
	"slices"
	"time"
)

// This file checks a decoded policy file's meaning and turns it into the
// resolved form the rest of the package reads (rules, tool rules, limit
// sets, provider configurations). Every error points at the line of the
// offending value, through the positions the decoder recorded.

// Bounds on settings. A value outside them is an error, not clamped: a
// host that wrote "call_timeout": "240h" meant something mcpseal will not do.
const (
	maxDescriptionBytes = 8 << 10 // a description override is a paragraph, not a document
	maxToolNameBytes    = 1024    // MCP names are 1–128 characters; servers send longer ones
	maxServerNameBytes  = 256     // a --name given on a command line
	maxLimitBytes       = 1 << 30 // argument_bytes, result_bytes: far above any frame
	maxCallsPerMinute   = 100000  // more is no limit at all
	maxCallTimeout      = 24 * time.Hour
	maxConfirmTimeout   = time.Hour // a person either answers or walked away
	maxProviderTimeout  = time.Minute
	minAuditFileBytes   = 64 << 10
	maxAuditFileBytes   = 1 << 30
	maxAuditFiles       = 1000
	maxProviderNameLen  = 64
)

// Values of the string settings.
const (
	connectAllow = "allow"
	connectBlock = "block"

	localPass      = "pass"
	localRefuse    = "refuse"
	localProviders = "providers"

	kindCommand = "command"
	kindHTTP    = "http"

	// BuiltinProvider is the name of the provider that is the policy file
	// itself. It always decides first and cannot be configured.
	BuiltinProvider = "builtin"
)

// checker validates one file, reporting errors at recorded positions.
type checker struct {
	w *walker
}

func (c *checker) fail(path, format string, args ...any) *FileError {
	off, ok := c.w.pos[path]
	if !ok {
		off = -1
	}
	return c.w.errAt(off, path, fmt.Sprintf(format, args...))
}

// build checks f and returns the policy it describes.
func (c *checker) build(f *fileJSON) (*Policy, error) {
	if f.Version != 1 {
		return nil, c.fail("version", "version must be 1")
	}
	p := &Policy{servers: map[string]*rules{}, names: map[string]string{}, providers: map[string]*providerConfig{}}
	for _, name := range sortedKeys(f.Providers) {
		pc, err := c.provider(joinPath("providers", name), name, f.Providers[name])
		if err != nil {
			return nil, err
		}
		p.providers[name] = pc
	}
	var err error
	if p.defaults, err = c.rules("defaults", f.Defaults, p.providers); err != nil {
		return nil, err
	}
	for _, key := range sortedKeys(f.Servers) {
		path := joinPath("servers", key)
		id, err := c.serverKey(path, key)
		if err != nil {
			return nil, err
		}
		if other, dup := p.names[id]; dup {
			return nil, c.fail(path, "names the same server as %s", quoteKey(other))
		}
		r, err := c.rules(path, f.Servers[key], p.providers)
		if err != nil {
			return nil, err
		}
		p.servers[id] = r
		p.names[id] = key
	}
	if p.audit, err = c.audit(f.Audit); err != nil {
		return nil, err
	}
	if p.subjects, err = c.subjects(f.Subjects, p); err != nil {
		return nil, err
	}
	return p, nil
}

// serverKey reads a servers key: 16 lowercase hex characters are an id,
// anything else is the name given to mcpseal run --name.
func (c *checker) serverKey(path, key string) (string, error) {
	switch {
	case isServerID(key):
		return key, nil
	case key == "" || key == "*":
		return "", c.fail(path, "a server key is a name or a 16-hex id (settings for every server go in \"defaults\")")
	case len(key) > maxServerNameBytes:
		return "", c.fail(path, "a server name is at most %d bytes", maxServerNameBytes)
	}
	return nameID(key), nil
}

func (c *checker) rules(path string, s *serverJSON, providers map[string]*providerConfig) (*rules, error) {
	r := &rules{tools: map[string]*toolRules{}}
	if s == nil {
		return r, nil
	}
	switch s.Connect {
	case "", connectAllow, connectBlock:
		r.connect = s.Connect
	default:
		return nil, c.fail(joinPath(path, "connect"), "connect must be %q or %q", connectAllow, connectBlock)
	}
	switch s.Local {
	case "", localPass, localRefuse, localProviders:
		r.local = s.Local
	default:
		return nil, c.fail(joinPath(path, "local"), "local must be %q, %q or %q", localPass, localRefuse, localProviders)
	}
	var err error
	if s.Allow != nil {
		if r.allow, err = c.toolSet(joinPath(path, "allow"), s.Allow); err != nil {
			return nil, err
		}
	}
	if r.deny, err = c.toolSet(joinPath(path, "deny"), s.Deny); err != nil {
		return nil, err
	}
	r.confirmDestructive, r.allowWarn = s.ConfirmDestructive, s.AllowWarn
	if s.Providers != nil {
		r.providers = []string{}
		for i, name := range s.Providers {
			at := fmt.Sprintf("%s.providers[%d]", path, i)
			switch {
			case name == BuiltinProvider:
				return nil, c.fail(at, "the builtin provider always decides first; do not list it")
			case providers[name] == nil:
				return nil, c.fail(at, "no provider named %s in \"providers\"", quoteKey(name))
			case slices.Contains(r.providers, name):
				return nil, c.fail(at, "provider %s is listed twice", quoteKey(name))
			}
			r.providers = append(r.providers, name)
		}
	}
	if s.ConfirmTimeout != "" {
		d, err := c.duration(joinPath(path, "confirm_timeout"), s.ConfirmTimeout, maxConfirmTimeout)
		if err != nil {
			return nil, err
		}
		r.confirmTimeout = &d
	}
	if r.limits, err = c.limits(joinPath(path, "limits"), s.Limits); err != nil {
		return nil, err
	}
	for _, name := range sortedKeys(s.Tools) {
		tp := joinPath(joinPath(path, "tools"), name)
		if err := c.toolName(tp, name); err != nil {
			return nil, err
		}
		t := s.Tools[name]
		tr := &toolRules{confirm: t.Confirm}
		if t.Description != nil {
			dp := joinPath(tp, "description")
			switch {
			case name == "*":
				return nil, c.fail(dp, "a description override names one tool, not \"*\"")
			case len(*t.Description) > maxDescriptionBytes:
				return nil, c.fail(dp, "a description override is at most %d bytes", maxDescriptionBytes)
			}
			tr.description = t.Description
		}
		if tr.limits, err = c.limits(joinPath(tp, "limits"), t.Limits); err != nil {
			return nil, err
		}
		if tr.who, err = c.toolWho(tp, t); err != nil {
			return nil, err
		}
		r.tools[name] = tr
	}
	return r, nil
}

func (c *checker) toolName(path, name string) error {
	if name == "" || len(name) > maxToolNameBytes {
		return c.fail(path, "a tool name is 1 to %d bytes", maxToolNameBytes)
	}
	return nil
}

func (c *checker) toolSet(path string, names []string) (map[string]bool, error) {
	set := make(map[string]bool, len(names))
	for i, n := range names {
		at := fmt.Sprintf("%s[%d]", path, i)
		if err := c.toolName(at, n); err != nil {
			return nil, err
		}
		if set[n] {
			return nil, c.fail(at, "tool %s is listed twice", quoteKey(n))
		}
		set[n] = true
	}
	return set, nil
}

func (c *checker) limits(path string, l *limitsJSON) (limitSet, error) {
	var ls limitSet
	if l == nil {
		return ls, nil
	}
	ranged := func(key string, v *int64, lo, hi int64) (*int64, error) {
		if v != nil && (*v < lo || *v > hi) {
			return nil, c.fail(joinPath(path, key), "%s must be between %d and %d", key, lo, hi)
		}
		return v, nil
	}
	var err error
	if ls.argumentBytes, err = ranged("argument_bytes", l.ArgumentBytes, 1, maxLimitBytes); err != nil {
		return ls, err
	}
	if ls.resultBytes, err = ranged("result_bytes", l.ResultBytes, 1, maxLimitBytes); err != nil {
		return ls, err
	}
	if ls.callsPerMinute, err = ranged("calls_per_minute", l.CallsPerMinute, 0, maxCallsPerMinute); err != nil {
		return ls, err
	}
	if l.CallTimeout != "" {
		d, err := c.duration(joinPath(path, "call_timeout"), l.CallTimeout, maxCallTimeout)
		if err != nil {
			return ls, err
		}
		ls.callTimeout = &d
	}
	return ls, nil
}

func (c *checker) duration(path, s string, hi time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || d > hi {
		return 0, c.fail(path, "expected a duration such as \"30s\" or \"2m\", above zero and at most %s", hi)
	}
	return d, nil
}

func (c *checker) audit(a *auditJSON) (AuditSettings, error) {
	s := DefaultAuditSettings
	if a == nil {
		return s, nil
	}
	if v := a.MaxFileBytes; v != nil {
		if *v < minAuditFileBytes || *v > maxAuditFileBytes {
			return s, c.fail("audit.max_file_bytes", "max_file_bytes must be between %d and %d", minAuditFileBytes, maxAuditFileBytes)
		}
		s.MaxFileBytes = *v
	}
	if v := a.MaxFiles; v != nil {
		if *v < 1 || *v > maxAuditFiles {
			return s, c.fail("audit.max_files", "max_files must be between 1 and %d", maxAuditFiles)
		}
		s.MaxFiles = int(*v)
	}
	if a.Required != nil {
		s.Required = *a.Required
	}
	return s, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
