package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/egress"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/httpgw"
	"github.com/mcpseal/mcpseal/internal/pathclock"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/launch"
	"github.com/mcpseal/mcpseal/lock"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/stdio"
)

func init() { register(newRunCmd) }

type runFlags struct {
	lock          runLockFlags
	profile       string
	policy        string
	remote        remoteFlags
	name          string
	posture       string
	maxFrame      int
	verifyTimeout time.Duration
	logLevel      string
	home          string
	state         string
	tel           telemetryFlags
}

func newRunCmd(e *env) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] -- COMMAND [ARGS...]",
		Short: "Run a stdio MCP server behind the gate",
		Long: `Run starts COMMAND as a stdio MCP server and puts the session gate between
it and the client that started mcpseal (stdin and stdout are the protocol
channel; logs go to stderr).

The first session pins the server's contract: every tool, prompt, resource
and resource template definition and the instructions. Every later session,
and every listing inside every session, is checked against the pin before the
client sees it. When the contract drifts the session is blocked: queued calls
never reach the server, every waiting request gets JSON-RPC error -32001 that
names the server, the review command and the change labels, and stderr shows a
labelled diff. Review it with 'mcpseal review ID' and accept it with
'mcpseal approve ID'.

The server's identity is --name when given, otherwise a digest of the exact
command line. Pins live in $MCPSEAL_HOME (default ~/.mcpseal).

Postures:
  guard    any drift blocks the session (default)
  strict   nothing is trusted without review: the first session of a new
           server is held until 'mcpseal approve', and a new capability
           profile of a pinned server must match a pinned profile exactly
  monitor  drift is recorded and reported on stderr, traffic is forwarded;
           this is not protection

With --lock FILE --name NAME the team lock is the baseline from the first
session (no trust on first use): definitions the lock does not approve are
withheld from the client, a call to one gets JSON-RPC error -32007, and the
locked package version runs even when the command asks for latest. A lock
that is missing, unreadable, tampered, unsigned (when the host config asks
for signatures) or rolled back stops the server before it starts.

Exit status: 0 when the client closed the session, 3 blocked on drift,
4 held because the pin store is missing or tampered, 5 the server exited or
crashed first, 6 the contract could not be verified, 7 the lock refused the
server, 8 an internal error in the gate closed the session (every waiting
request got -32016), 2 usage.

In a client's config, replace the server's command with:
  mcpseal run --name NAME -- <original command> <args...>`,
		Example: `  mcpseal run -- npx -y @modelcontextprotocol/server-memory
  mcpseal run --name files -- npx -y @modelcontextprotocol/server-filesystem /tmp`,
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := e.withHome(f.home)
			if err != nil {
				return err
			}
			if f.remote.url != "" {
				if len(args) > 0 {
					return &usageError{errors.New("run --url takes no server command")}
				}
				return runServer(e, f, nil)
			}
			if f.profile != "" {
				// The profile pins the command; one given after -- must
				// equal it.
				if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
					return &usageError{errors.New("with --profile, a command may follow only after --")}
				}
				if len(args) == 0 {
					args = nil // no command given: the profile's own
				}
				return runServer(e, f, args)
			}
			if cmd.ArgsLenAtDash() != 0 || len(args) == 0 {
				return &usageError{withHint(errors.New("run needs the server command after --"), "mcpseal run [--name NAME] -- COMMAND [ARGS...]")}
			}
			return runServer(e, f, args)
		},
	}
	fl := cmd.Flags()
	addStateFlag(cmd, &f.state)
	fl.StringVar(&f.name, "name", "", "the server's `NAME` (its identity); default: a digest of the command line")
	fl.StringVar(&f.posture, "posture", "guard", "`guard`, strict or monitor")
	fl.StringVar(&f.home, "home", "", "keep pins and all other state in `DIR` (absolute; overrides $MCPSEAL_HOME, which a client may not pass on)")
	fl.IntVar(&f.maxFrame, "max-frame", jsonrpc.DefaultMaxFrame, "largest message in `BYTES` either way")
	fl.DurationVar(&f.verifyTimeout, "verify-timeout", gate.DefaultLimits.VerifyTimeout, "how long the server may take to list its contract")
	fl.StringVar(&f.logLevel, "log-level", "info", "stderr log `LEVEL`: debug, info, warn or error")
	fl.StringVar(&f.policy, "policy", "", "host policy `FILE` (default $MCPSEAL_HOME/policy.json when it exists): allow/deny lists, description overrides, confirmation, limits, preflight providers; see docs/policy.md")
	fl.StringVar(&f.remote.url, "url", "", "gate the remote Streamable HTTP server at `URL` instead of a command (HTTPS, public addresses only unless --private)")
	fl.BoolVar(&f.remote.private, "private", false, "with --url: allow this exact URL on a private or loopback address (plain http only on loopback); it is resolved once and pinned")
	fl.StringVar(&f.remote.credHeader, "credential-header", "", "with --url: the `HEADER` the credential goes in (with --credential-env, or --credential-file holding the value)")
	fl.StringVar(&f.remote.credFile, "credential-file", "", "with --url: credential `FILE`: the header's value, or {\"version\":1,\"headers\":{...}} as 'mcpseal wrap' writes it")
	fl.StringVar(&f.remote.credEnv, "credential-env", "", "with --url and --credential-header: the environment `VARIABLE` holding the value")
	fl.StringVar(&f.profile, "profile", "", "launch exactly what the launch profile `NAME` (or FILE) pins, verified and confined (see 'mcpseal profile'); the profile names the server")
	fl.StringVar(&f.lock.path, "lock", "", "enforce the team lock `FILE` (needs --name): unapproved definitions are withheld, the locked package version runs")
	fl.BoolVar(&f.lock.onlyLocked, "only-locked", false, "with --lock: refuse to start a server the lock does not list")
	fl.StringVar(&f.lock.events, "lock-events", "", "with --lock: append one JSON line per listing and refused call to `FILE`")
	f.tel.add(fl)
	fl.StringVar(&f.lock.hostConfig, "lock-host-config", "", "with --lock: host config `FILE` naming trusted signing keys and a sequence store (default $"+lock.HostConfigEnv+")")
	return cmd
}

// check validates run's flags and returns the posture and the logger.
func (f runFlags) check(stderr io.Writer) (pin.Posture, *slog.Logger, error) {
	posture, err := pin.ParsePosture(f.posture)
	if err != nil {
		return "", nil, &usageError{err}
	}
	if f.maxFrame < 1024 {
		return "", nil, &usageError{errors.New("--max-frame must be at least 1024 bytes")}
	}
	logger, err := newLogger(stderr, f.logLevel)
	if err != nil {
		return "", nil, &usageError{err}
	}
	switch {
	case f.profile != "" && f.name != "":
		return "", nil, &usageError{errors.New("--profile names the server itself; drop --name")}
	case f.lock.path != "" && f.name == "" && f.profile == "":
		return "", nil, &usageError{errLockNeedsName}
	case f.remote.url != "" && f.profile != "":
		return "", nil, &usageError{errors.New("--url and --profile exclude each other")}
	case f.remote.url == "" && (f.remote.private || f.remote.credHeader != "" || f.remote.credFile != "" || f.remote.credEnv != ""):
		return "", nil, &usageError{errors.New("--private and --credential-* go with --url")}
	}
	return posture, logger, nil
}

// A session plan says who the server is, how it starts and what decides
// what the client sees; runServer fills it step by step, in the order that
// lets each check refuse before anything starts.
type sessionPlan struct {
	id        pin.Identity
	name      string // the name locks and policies know the server by
	argv      []string
	profile   *launch.Profile
	maxStderr int64
	closers   []func() error
}

func (p *sessionPlan) close() {
	for _, c := range p.closers {
		_ = c()
	}
}

// runMemoryLimit is the soft memory limit of `mcpseal run`
// (runtime/debug.SetMemoryLimit). The garbage collector keeps its default
// pace (GOGC=100), which a session's small heap needs for its CPU per
// call, and collects harder only as a large listing's heap nears the
// limit: that, not the pace, bounds the peak of a 10,000-tool session.
// A live heap beyond it is not refused, only collected more often.
const runMemoryLimit = 48 << 20

func runServer(e *env, f runFlags, argv []string) error {
	posture, logger, err := f.check(e.stderr)
	if err != nil {
		return err
	}
	if e.getenv("GOMEMLIMIT") == "" {
		// A proxy in front of every server a client runs: dozens per
		// machine (docs/performance.md). GOMEMLIMIT, when set, decides
		// instead; GOGC is the runtime's as always.
		debug.SetMemoryLimit(runMemoryLimit)
	}
	dropStartPages()
	if f.remote.url == "" {
		go warmProcessStart()
	}
	plan := &sessionPlan{argv: argv, name: f.name}
	defer plan.close()
	// The clock's file may be in neither the home this run uses (--home),
	// nor the one the environment names, nor the user's default one.
	var homes []string
	if e.getenv(pathclock.Env) != "" {
		if _, err := pin.DefaultHome(e.getenv); err != nil {
			return err
		}
		homes = switchHomes(e.getenv, os.Getenv)
	}
	clock, writeClock, err := pathclock.Open(e.getenv, homes...)
	if err != nil {
		return err
	}
	defer func() {
		if err := writeClock(); err != nil {
			logger.Warn("the path clock's report was not written", "err", err)
		}
	}()
	switch {
	case f.profile != "":
		if err := plan.loadProfile(e, f.profile); err != nil {
			return err
		}
	case f.name != "":
		plan.id = pin.IdentityForName(f.name)
	case f.remote.url != "":
		plan.id = pin.IdentityForName(f.remote.url) // as a gateway url route
	default:
		plan.id = pin.IdentityForArgv(argv)
	}
	// "label", not "server": the gate's own lines name the server by its
	// id under "server", and a key twice in one line is read differently
	// by different log parsers.
	logger = logger.With("label", plan.id.Label)
	tel, exp, stopExporters, err := startExporters(e, f.tel, f.state, logger)
	if err != nil {
		return err
	}
	defer stopExporters()
	guard, err := buildGuard(e, hostSpec{id: plan.id, name: plan.name, argv: plan.argv, url: f.remote.url, lock: f.lock, policy: f.policy, posture: posture, pinnedArgv: plan.profile != nil, state: f.state, tel: tel, export: exp}, logger)
	if err != nil {
		return err
	}
	defer guard.close()
	plan.argv = guard.argv
	refusal := guard.refusal
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	var srv stdio.Server
	switch {
	case refusal != nil:
		// before_connect refused: the server is never started, and the
		// client is told why for every request.
		logger.Warn("the host policy refused the server before connecting: it was not started", "reason", refusal.Reason)
		srv = stdio.Nothing()
	case plan.profile != nil:
		if srv, err = plan.startProfile(e); err != nil {
			return err
		}
	case f.remote.url != "":
		if srv, err = f.remote.upstream(e, plan.id, logger); err != nil {
			return err
		}
		up, isURL := srv.(*egress.Upstream)
		if ts, ok := guard.hooks.Observer.(httpgw.HeaderTracer); ok && isURL {
			up.SetTrace(ts.UpstreamHeaders)
		}
	default:
		// Started here, not by stdio.Run, so that what is left to set up
		// (the gate, the pin record's read) overlaps the server's start.
		if srv, err = stdio.StartChild(plan.argv, childEnv(), ""); err != nil {
			return exitWith(ExitServer, err)
		}
	}
	if st, ok := guard.baseline.(*pin.Store); ok && refusal == nil {
		// The record is read while the server starts, not after its
		// listing arrives (pin.Store.Prefetch).
		st.Prefetch(plan.id.ID)
	}
	r := &reporter{w: e.stderr, id: plan.id}
	g := gate.New(gate.Config{
		Identity:       plan.id,
		Posture:        posture,
		Pins:           guard.baseline,
		Hooks:          clockHooks(guard.hooks, clock),
		Limits:         gate.Limits{VerifyTimeout: f.verifyTimeout},
		IDPrefix:       gate.NewIDPrefix(),
		Logger:         logger,
		OnDrift:        r.drift,
		OnVerified:     r.verified,
		ConfirmTimeout: guard.confirmTimeout,
	})
	if refusal != nil {
		g.Refuse(*refusal)
	}
	res, err := stdio.Run(ctx, stdio.Config{
		Server:    srv,
		Argv:      plan.argv,
		MaxFrame:  f.maxFrame,
		Gate:      g,
		ClientIn:  e.stdin,
		ClientOut: e.stdout,
		Stderr:    e.stderr,
		Logger:    logger,
		MaxStderr: plan.maxStderr,
		Clock:     clock,
	})
	if err != nil {
		return exitWith(ExitServer, err)
	}
	return exitWith(runExitCode(res), nil)
}

// childEnv is the environment a plain run's server starts with: this
// process's (nil), less the developer's switches that name files mcpseal
// writes (MCPSEAL_PATHCLOCK and the profiles), when any is set: they are
// for this process, and a server that got them could write into those
// files or, being another mcpseal, fail on them.
func childEnv() []string {
	env := os.Environ()
	if kept := pathclock.Without(env); len(kept) != len(env) {
		return kept
	}
	return nil
}

// warmProcessStart has the runtime check, now, what it checks before the
// first process this one starts: on Linux, whether pidfds work, which it
// finds out by starting a child of its own (os.checkPidfd). Run beside
// the guard's set-up instead of inside the server's start, that check is
// off the path to the first listing (docs/performance.md, issue 12,
// start-up). os.FindProcess of this process makes the same check once.
func warmProcessStart() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Release()
	}
}

// runExitCode maps how a session ended to mcpseal's exit status.
func runExitCode(res stdio.Result) int {
	if res.Gate.Closed {
		switch res.Gate.Code {
		case gate.CodeBlocked:
			return ExitBlocked
		case gate.CodeHeld:
			return ExitHeld
		case gate.CodeUnverified:
			return ExitVerify
		case codePreflight:
			return ExitRefused
		}
	}
	if res.Failed || res.Gate.Code == gate.CodeInternal {
		// A bug, not a finding: the session was closed fail-closed.
		return ExitFailed
	}
	if res.ServerExited {
		return ExitServer
	}
	return ExitOK
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("unknown log level %q", level)
	}
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	return slog.New(h).With("app", "mcpseal"), nil
}

// reporter writes the gate's findings to the terminal (stderr).
type reporter struct {
	w  io.Writer
	id pin.Identity
}

func (r *reporter) verified(profile string, outcome pin.Outcome, c *contract.Contract) {
	switch outcome {
	case pin.FirstPin:
		fmt.Fprintf(r.w, "mcpseal: pinned %s for %s (%s)\n", countDefs(c), r.id.Label, r.id.ID)
	case pin.ProfileAdded:
		fmt.Fprintf(r.w, "mcpseal: pinned a new client profile (%s) for %s (%s): %s\n", profile, r.id.Label, r.id.ID, countDefs(c))
	}
}

func countDefs(c *contract.Contract) string {
	var parts []string
	for _, k := range contract.Kinds {
		if n := len(c.Defs[k]); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s(s)", n, k.Singular()))
		}
	}
	if c.Instructions != nil {
		parts = append(parts, "instructions")
	}
	if len(parts) == 0 {
		return "an empty contract"
	}
	return strings.Join(parts, ", ")
}

// maxDriftShown bounds the changes a drift report writes to stderr (each
// may be a diff of 400 lines): a server that changes a whole large
// contract would otherwise fill the client's log before the block.
const maxDriftShown = 50

// maxDriftListed bounds the one-line entries for the changes after those.
const maxDriftListed = 200

func (r *reporter) drift(d gate.DriftReport) {
	w := r.w
	if d.Result.AwaitingApproval {
		fmt.Fprintf(w, "\nmcpseal: THIS SERVER HAS NO APPROVED CONTRACT YET (posture strict)\n\n")
	} else {
		fmt.Fprintf(w, "\nmcpseal: CONTRACT CHANGED SINCE YOU APPROVED THIS SERVER\n\n")
	}
	fmt.Fprintf(w, "  server: %s (%s)\n", r.id.Label, r.id.ID)
	if d.MidSession {
		fmt.Fprintf(w, "  seen:   in a listing inside a verified session\n")
	}
	fmt.Fprintln(w)
	// The changes with telling labels come first, so that what a person
	// must see is among those shown in full; the rest get a line each.
	changes := contract.RiskFirst(d.Result.Changes)
	shown, rest := changes, []contract.Change(nil)
	if len(shown) > maxDriftShown {
		shown, rest = changes[:maxDriftShown], changes[maxDriftShown:]
	}
	if err := contract.RenderDiff(w, d.Result.Pinned, d.Observed, shown); err != nil {
		fmt.Fprintf(w, "mcpseal: error: cannot render the diff: %v\n", err)
	}
	if len(rest) > 0 {
		counts := contract.LabelCounts(changes)
		var tally []string
		for _, c := range append(slices.Clone(contract.LabelCodes), contract.ProtocolCodes...) {
			if counts[c] > 0 {
				tally = append(tally, fmt.Sprintf("%s %d", c, counts[c]))
			}
		}
		fmt.Fprintf(w, "\n  labels over all %d changes: %s\n", len(changes), strings.Join(tally, ", "))
		fmt.Fprintf(w, "  %d more changes, not shown in full (mcpseal review %s shows them all):\n", len(rest), r.id.ID)
		for i, ch := range rest {
			if i == maxDriftListed {
				fmt.Fprintf(w, "    ... and %d more\n", len(rest)-i)
				break
			}
			fmt.Fprintf(w, "    %s %s %s: %s\n", ch.Op, ch.Kind.Singular(), contract.SafeName(ch.Name), strings.Join(ch.Codes(), ", "))
		}
	}
	fmt.Fprintln(w)
	if d.Forwarded {
		fmt.Fprintf(w, "  Posture monitor: the session was NOT blocked. This is not protection.\n")
	} else {
		fmt.Fprintf(w, "  This session is blocked. Queued calls were not forwarded to the server.\n")
	}
	fmt.Fprintf(w, "  Review the change:        mcpseal review %s\n", r.id.ID)
	fmt.Fprintf(w, "  If you accept it, then:   mcpseal approve %s\n\n", r.id.ID)
}
