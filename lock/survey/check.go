package survey

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/lock"
	"github.com/mcpseal/mcpseal/pkgpin"
	"github.com/mcpseal/mcpseal/probe"
)

// Finding codes. Fail codes make lock --check exit 1; note codes do not.
const (
	CodeServerAdded        = "server-added"         // in the config, not in the lock
	CodeServerRemoved      = "server-removed"       // in the lock, not in the config
	CodeCommandChanged     = "command-changed"      // the config's command differs from the lock's
	CodePackageMissing     = "package-missing"      // a registry launch the lock does not pin
	CodePackageChanged     = "package-changed"      // the config names another package or version
	CodeRegistryChanged    = "registry-changed"     // the registry serves other contents for the locked version
	CodeRegistryError      = "registry-unreachable" // the locked version could not be checked
	CodeServerFailed       = "server-failed"        // the server did not start or list its contract
	CodeDefinitionsChanged = "definitions-changed"  // the server's definitions differ from the lock
	CodeConfigError        = "config-error"         // the config entry cannot be used

	NoteNewerRelease    = "newer-release"     // the registry has a newer release the lock holds back
	NotePending         = "pending-approval"  // the lock holds definitions nobody approved yet
	NoteRemote          = "remote-not-locked" // a remote server; this release locks stdio servers
	NoteDefinitionsOnly = "definitions-only"  // the lock pins definitions, not the package
)

// Finding is one result of a check.
type Finding struct {
	Server string
	Code   string
	Fail   bool
	// Message is mcpseal's own words; it never holds server text.
	Message string
	// Changes, Locked and Observed are set for definitions-changed.
	Changes          []contract.Change
	Locked, Observed *contract.Contract
	// Stderr is the end of the server's stderr for server-failed (server
	// text: terminal only).
	Stderr []byte
}

// Check compares every local server of the config with the lock: command
// identity, package pin, what the registry serves for the pinned version,
// and the definitions the server shows now. Findings come in server
// order; a server with none matched the lock.
func (s *Survey) Check(ctx context.Context, targets []Target, l *lock.Lock) []Finding {
	var out []Finding
	inConfig := map[string]bool{}
	for i := range targets {
		t := &targets[i]
		inConfig[t.Name] = true
		out = append(out, s.checkOne(ctx, t, l)...)
	}
	for _, name := range l.Names() {
		if !inConfig[name] {
			out = append(out, Finding{Server: name, Code: CodeServerRemoved, Fail: true,
				Message: "the lock has this server and the config does not; run 'mcpseal lock' to drop it"})
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return strings.Compare(a.Server, b.Server) })
	return out
}

func (s *Survey) checkOne(ctx context.Context, t *Target, l *lock.Lock) []Finding {
	fail := func(code, format string, args ...any) Finding {
		return Finding{Server: t.Name, Code: code, Fail: true, Message: fmt.Sprintf(format, args...)}
	}
	note := func(code, format string, args ...any) Finding {
		return Finding{Server: t.Name, Code: code, Message: fmt.Sprintf(format, args...)}
	}
	if t.Remote {
		_, locked := l.Entry(t.Name)
		if locked {
			return []Finding{fail(CodeCommandChanged, "the config now reaches this server over the network; the lock has it as a local command")}
		}
		return []Finding{note(NoteRemote, "a remote server; this release locks local (stdio) servers only")}
	}
	e, ok := l.Entry(t.Name)
	if !ok {
		return []Finding{fail(CodeServerAdded, "the config has this server and the lock does not; run 'mcpseal lock' and review the result")}
	}
	if t.Err != nil {
		return []Finding{fail(CodeConfigError, "%v", t.Err)}
	}
	var out []Finding
	if d := e.Command.Differences(t.Command); len(d) > 0 {
		out = append(out, fail(CodeCommandChanged, "the config's %s differ from the lock's; run 'mcpseal lock' and review the result", strings.Join(d, ", ")))
	}
	argv, findings, ok := s.checkPackage(ctx, t, e)
	out = append(out, findings...)
	if !ok {
		return out
	}
	res, err := s.probe(ctx, t, argv)
	if err != nil {
		f := fail(CodeServerFailed, "%v", err)
		var pe *probe.Error
		if errors.As(err, &pe) {
			f.Stderr = pe.Stderr
		}
		if len(t.Expanded.Env) > 0 || len(t.Server.Env) > 0 {
			f.Message += " (a server that needs credentials to list its tools needs them here too, and in CI)"
		}
		return append(out, f)
	}
	if changes := contract.Compare(e.Contract(), res.Contract); len(changes) > 0 {
		f := fail(CodeDefinitionsChanged, "%d definition(s) differ from the lock", len(changes))
		f.Changes, f.Locked, f.Observed = changes, e.Contract(), res.Contract
		out = append(out, f)
	}
	if pending := e.Pending(); len(pending) > 0 {
		out = append(out, note(NotePending, "%d definition(s) in the lock are pending approval; they are withheld at run time ('mcpseal lock diff %s')", len(pending), t.Name))
	}
	return out
}

// checkPackage compares the config's launch with the lock's pin and the
// registry, and returns the command line to probe (the locked version)
// and whether probing makes sense.
func (s *Survey) checkPackage(ctx context.Context, t *Target, e *lock.Entry) ([]string, []Finding, bool) {
	fail := func(code, format string, args ...any) Finding {
		return Finding{Server: t.Name, Code: code, Fail: true, Message: fmt.Sprintf(format, args...)}
	}
	argv := t.Expanded.Argv
	switch {
	case e.DefinitionsOnly:
		return argv, []Finding{{Server: t.Name, Code: NoteDefinitionsOnly, Message: "the lock pins this server's definitions, not its package"}}, true
	case t.Launch != nil && e.Package == nil:
		return nil, []Finding{fail(CodePackageMissing, "the command launches %s, and the lock pins no package for it; run 'mcpseal lock'", t.Launch)}, false
	case t.Launch == nil && e.Package == nil:
		return argv, nil, true
	}
	rewritten, err := pkgpin.Rewrite(argv, e.Package)
	if err != nil {
		return nil, []Finding{fail(CodePackageChanged, "%v", err)}, false
	}
	var out []Finding
	v, err := s.Registry.Check(ctx, e.Package)
	switch {
	case err != nil:
		out = append(out, fail(CodeRegistryError, "cannot check %s against its registry: %v", e.Package, err))
	case len(v.Changed) > 0:
		out = append(out, fail(CodeRegistryChanged, "the registry now serves other contents for %s (%s)", e.Package, strings.Join(v.Changed, ", ")))
	}
	if err == nil && v.Latest != "" {
		out = append(out, Finding{Server: t.Name, Code: NoteNewerRelease,
			Message: fmt.Sprintf("%s %s is out; the lock holds %s back until 'mcpseal lock' updates it", e.Package.Name, v.Latest, e.Package.Version)})
	}
	return rewritten, out, true
}

// Failed reports whether any finding fails the check.
func Failed(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Fail })
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
