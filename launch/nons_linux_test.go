package launch

import (
	"errors"
	"strings"
	"testing"
)

// withoutNamespaces runs f as on a system where user namespaces are
// switched off.
func withoutNamespaces(t *testing.T, f func()) {
	noNamespaces = true
	defer func() { noNamespaces = false }()
	f()
}

// TestRequiredNamespacesUnavailable: a profile that requires namespaces
// (or the network policy) is refused where they cannot be created, and
// says which confinement is missing.
func TestRequiredNamespacesUnavailable(t *testing.T) {
	withoutNamespaces(t, func() {
		for _, req := range [][]Confinement{{ConfineNamespaces}, {ConfineNetwork}} {
			p := hostileProfile(t)
			p.Require = req
			_, rep, err := Start(p, Request{})
			if !errors.Is(err, ErrUnenforceable) || !strings.Contains(err.Error(), string(req[0])) {
				t.Errorf("require %v without namespaces: %v", req, err)
			}
			if rep == nil || rep.IsEnforced(req[0]) {
				t.Errorf("report %+v claims %s", rep, req[0])
			}
		}
	})
}

// TestWithoutNamespacesOrphansDie: where namespaces are not required and
// not available, the rest still confines the server, the report says
// what is not enforced, and the helper's init (a subreaper) still kills
// what the server leaves behind.
func TestWithoutNamespacesOrphansDie(t *testing.T) {
	withoutNamespaces(t, func() {
		p := hostileProfile(t)
		p.Require = []Confinement{ConfineFilesystem, ConfineNoNewPrivs, ConfineSyscalls}
		marker := markProfile(t, p)
		s := launch(t, p)
		for _, c := range []Confinement{ConfineNamespaces, ConfineNetwork} {
			if s.rep.IsEnforced(c) {
				t.Errorf("the report claims %s without namespaces", c)
			}
		}
		for _, c := range p.Require {
			if !s.rep.IsEnforced(c) {
				t.Errorf("%s is not enforced", c)
			}
		}
		wantDenied(t, "ptrace", s.mustCall("ptrace", nil))
		wantDenied(t, "reading /etc/passwd", s.mustCall("read", map[string]any{"path": "/etc/passwd"}))
		wantOK(t, "leaving a child", s.mustCall("orphan", nil))
		wantOK(t, "ignoring SIGTERM", s.mustCall("stubborn", nil))
		s.close()
		if left := marked(marker); len(left) > 0 {
			t.Errorf("processes %v outlived the session", left)
		}
	})
}
