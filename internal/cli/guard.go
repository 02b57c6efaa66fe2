package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/oauth"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/siem"
	"github.com/mcpseal/mcpseal/telemetry"
)

// hostSpec is what the host's decisions about one server depend on.
type hostSpec struct {
	id      pin.Identity
	name    string   // the name locks and policies know the server by
	argv    []string // a stdio server's command
	url     string   // a remote server's endpoint
	lock    runLockFlags
	policy  string // --policy FILE; "" for $MCPSEAL_HOME/policy.json
	posture pin.Posture
	// pinnedArgv: a launch profile pins the command, so a lock may not
	// rewrite it (it must already run the locked version).
	pinnedArgv bool
	// who is the authenticated caller of a team gateway's legacy session,
	// for the audit; identityChecked says the front door applies the
	// policy's subject rules per caller (so the session does not withhold
	// subject-restricted tools from everyone).
	who             *oauth.Identity
	identityChecked bool
	// pins is the pin store when the caller opened it (the gateway);
	// else state names the database (--state), "" for $MCPSEAL_HOME.
	pins  *pin.Store
	state string
	// tel, when set, meters and traces the session.
	tel *telemetry.Telemetry
	// export, when set, ships the audit log; its full spool refuses
	// calls under audit.required.
	export *siem.Exporter
}

// hostGuard is the host's decisions for one server beyond its pin: the
// baseline (the pin store or a team lock), the hooks (lock, policy,
// audit), a before_connect refusal, and the command to run (the locked
// version). run and the gateway build it the same way.
type hostGuard struct {
	argv           []string
	baseline       gate.PinStore
	lock           *lockGate // nil without a lock
	hooks          gate.Hooks
	refusal        *gate.Refusal
	confirmTimeout time.Duration
	closers        []func() error
}

func (g *hostGuard) close() {
	for _, c := range g.closers {
		_ = c()
	}
	g.closers = nil
}

// buildGuard makes the decisions for s; an error means the server must
// not start (its exit status is set).
func buildGuard(e *env, s hostSpec, logger *slog.Logger) (*hostGuard, error) {
	g := &hostGuard{argv: s.argv}
	ok := false
	defer func() {
		if !ok {
			g.close()
		}
	}()
	if s.lock.path != "" {
		if s.name == "" {
			return nil, &usageError{errLockNeedsName}
		}
		if err := g.useLock(e, s, logger); err != nil {
			return nil, err
		}
	}
	pol, err := loadPolicy(e, s.policy)
	if err != nil {
		return nil, exitWith(ExitRefused, withHint(fmt.Errorf("host policy: %w", err), "check it with 'mcpseal policy-check'"))
	}
	sink, err := openAudit(e, pol, s.id, logger, s.state)
	if err != nil {
		if pol != nil && pol.Audit().Required {
			return nil, exitWith(ExitRefused, withHint(fmt.Errorf("audit log: %w", err), "the host policy requires the audit log"))
		}
		logger.Warn("audit log unavailable: decisions are not recorded", "err", err)
	} else {
		sink.subject, sink.issuer, sink.client, sink.jti = auditIdentity(s.who)
		g.closers = append(g.closers, sink.close)
		if s.export != nil {
			sink.export = s.export
		}
	}
	if pol != nil {
		pg := newPolicyGate(pol, s.id, g.argv, s.url, s.identityChecked, policyWho(s.who), logger)
		if g.lock != nil && g.lock.posture == pin.Monitor {
			pg.base = g.lock.entry.ApprovedContract()
		}
		if g.refusal = pg.beforeConnect(); g.refusal == nil {
			g.hooks = composeHooks(g.hooks, pg.hooks())
			g.confirmTimeout = pg.ss.Server().ConfirmTimeout()
		}
	}
	if sink != nil {
		ev := audit.Event{Op: audit.OpConnect, Outcome: audit.Allowed}
		if g.refusal != nil {
			ev.Outcome, ev.Code = audit.Refused, g.refusal.Reason
		}
		sink.record(ev)
		g.hooks = composeHooks(sink.hooks(), g.hooks)
	}
	if g.baseline == nil && s.pins != nil {
		g.baseline = s.pins
	}
	if g.baseline == nil {
		if err := g.useStateDB(e, s.state, logger); err != nil {
			return nil, err
		}
	}
	g.observe(s.tel, s, sink)
	if g.baseline == nil {
		home, err := pin.DefaultHome(e.getenv)
		if err != nil {
			return nil, exitWith(ExitHeld, err)
		}
		store, err := pin.Open(home)
		if err != nil {
			// The session is held as for any tampered store: the client
			// gets -32002 for every request, rather than a process that
			// exited without a word.
			logger.Error("pin store unusable: every session is held", "err", err)
			g.baseline = heldStore{err}
		} else {
			g.baseline = store
		}
	}
	ok = true
	return g, nil
}

// heldStore stands for a pin store that could not be opened (a link or a
// special file in place of its folders, a folder others may write to):
// every check fails with that error, so the gate holds the session.
type heldStore struct{ err error }

func (h heldStore) Observe(pin.Identity, pin.Observation, *contract.Contract, pin.Posture, time.Time) (pin.Result, error) {
	return pin.Result{}, h.err
}

// useLock makes the team lock the baseline, when it lists the server,
// and runs the locked package version.
func (g *hostGuard) useLock(e *env, s hostSpec, logger *slog.Logger) error {
	if err := useStateSequences(e, &s, logger); err != nil {
		return exitWith(ExitRefused, err)
	}
	lg, err := openLock(e, s.lock, s.name)
	if err != nil {
		return exitWith(ExitRefused, err)
	}
	if lg == nil {
		return nil
	}
	g.closers = append(g.closers, lg.close)
	if s.url == "" {
		argv, err := lg.entry.LaunchArgv(g.argv)
		if err != nil {
			return exitWith(ExitRefused, withHint(fmt.Errorf("the lock refuses this command: %w", err), "the command must run the package the lock pins; run 'mcpseal lock' to change the lock"))
		}
		if s.pinnedArgv && g.argv != nil && !slices.Equal(argv, g.argv) {
			return exitWith(ExitRefused, errors.New("the lock pins another package version than the launch profile runs; update one of them"))
		}
		if !s.pinnedArgv {
			g.argv = argv
		}
	}
	lg.posture = s.posture
	g.baseline, g.lock = lg, lg
	g.hooks = lg.hooks(func(msg string, args ...any) { logger.Warn(msg, args...) })
	return nil
}
