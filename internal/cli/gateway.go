package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/httpgw"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/oauth"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/sessionid"
)

func init() { register(newGatewayCmd) }

type gatewayFlags struct {
	routes        string
	port          int
	bind          string
	tokenFile     string
	noToken       bool
	allowOrigins  []string
	posture       string
	maxBody       int
	verifyTimeout time.Duration
	logLevel      string
	policy        string
	team          teamFlags
	state         string
	sessionKey    string
	tel           telemetryFlags
}

func newGatewayCmd(e *env) *cobra.Command {
	var f gatewayFlags
	cmd := &cobra.Command{
		Use:   "gateway --routes FILE [flags]",
		Short: "Serve MCP servers to local HTTP clients, behind the gate",
		Long: `Gateway serves each route of the routes file at http://127.0.0.1:PORT/ROUTE as
a Streamable HTTP MCP server (both protocol generations). Behind each route is
a stdio server it starts per session ("command") or a remote server it reaches
through a rebinding-safe HTTPS client ("url"), and the same session gate as
'mcpseal run': pins, listing checks all session long, drift blocks.

By default the listener binds 127.0.0.1 (or ::1 with --bind ::1) and nothing else. Every
request needs the launch token as "Authorization: Bearer TOKEN": a new token
on every start, written 0600 to --token-file or, without it, printed once to
stderr when stderr is a terminal (the gateway refuses to start otherwise, so
the token never lands in a log). The Host must be 127.0.0.1:PORT,
localhost:PORT or [::1]:PORT; a request with an Origin is refused unless
--allow-origin names it; a browser request from a web page is refused. The
inbound Authorization header is never forwarded upstream.

The team gateway: --listen HOST:PORT with --tls-cert and --tls-key (or
--insecure-behind-proxy with --trusted-proxy) and --auth auth.json serves
many callers over the network as an OAuth 2.1 resource server: access tokens
replace the launch token, and the host policy's subjects decide per caller
(docs/gateway.md, "The team gateway"). A non-loopback --listen refuses to
start without --auth and TLS.

The routes file is documented in docs/gateway.md:

  {"routes": {
     "docs":  {"url": "https://mcp.example.com/mcp"},
     "local": {"url": "http://127.0.0.1:3000/mcp", "private": true},
     "mem":   {"command": ["npx", "-y", "@modelcontextprotocol/server-memory"]}}}`,
		Example: `  mcpseal gateway --routes routes.json --port 8765 --token-file ~/.mcpseal/gateway.token
  curl -H "Authorization: Bearer $(cat ~/.mcpseal/gateway.token)" \
       -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
       http://127.0.0.1:8765/mem -d '{"jsonrpc":"2.0","id":1,"method":"initialize",...}'`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.team.bindOrPort = cmd.Flags().Changed("bind") || cmd.Flags().Changed("port")
			return runGateway(e, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.routes, "routes", "", "the routes `FILE` (required)")
	fl.IntVar(&f.port, "port", 8765, "the `PORT` to listen on (0 picks a free one)")
	fl.StringVar(&f.bind, "bind", "127.0.0.1", "the loopback `ADDRESS` to bind: 127.0.0.1 or ::1")
	fl.StringVar(&f.tokenFile, "token-file", "", "write the launch token to `PATH` (mode 0600)")
	fl.BoolVar(&f.noToken, "no-token", false, "serve without a launch token (for local tools that cannot send headers)")
	fl.StringArrayVar(&f.allowOrigins, "allow-origin", nil, "allow browser requests from this exact `ORIGIN` (repeatable)")
	fl.StringVar(&f.posture, "posture", "guard", "`guard`, strict or monitor, for routes that name none")
	fl.IntVar(&f.maxBody, "max-body", jsonrpc.DefaultMaxFrame, "largest request body in `BYTES`")
	fl.DurationVar(&f.verifyTimeout, "verify-timeout", gate.DefaultLimits.VerifyTimeout, "how long a server may take to list its contract")
	fl.StringVar(&f.logLevel, "log-level", "info", "stderr log `LEVEL`: debug, info, warn or error")
	fl.StringVar(&f.policy, "policy", "", "host policy `FILE` for routes that name none (default $MCPSEAL_HOME/policy.json when it exists)")
	addTeamFlags(fl, &f.team)
	addStateFlag(cmd, &f.state)
	fl.StringVar(&f.sessionKey, "session-key", "", "the replicas' shared session key `FILE`: url routes' legacy sessions continue on any replica holding it (docs/fleet.md)")
	f.tel.add(fl)
	return cmd
}

func runGateway(e *env, f gatewayFlags) error {
	if f.routes == "" {
		return &usageError{withHint(errors.New("gateway needs --routes FILE"), "see docs/gateway.md for the routes file")}
	}
	if f.port < 0 || f.port > 65535 {
		return &usageError{errors.New("--port must be 0 to 65535")}
	}
	if f.noToken && f.tokenFile != "" {
		return &usageError{errors.New("--no-token and --token-file exclude each other")}
	}
	if f.maxBody < 1024 {
		return &usageError{errors.New("--max-body must be at least 1024 bytes")}
	}
	for _, o := range f.allowOrigins {
		if !validOrigin(o) {
			return &usageError{fmt.Errorf("--allow-origin %q is not an origin (scheme://host[:port])", o)}
		}
	}
	team, err := checkTeam(f)
	if err != nil {
		return err
	}
	posture, err := pin.ParsePosture(f.posture)
	if err != nil {
		return &usageError{err}
	}
	logger, err := newLogger(e.stderr, f.logLevel)
	if err != nil {
		return &usageError{err}
	}
	routes, err := httpgw.ReadRoutes(f.routes)
	if err != nil {
		return err
	}
	var sessionKeys *sessionid.Keys
	if f.sessionKey != "" {
		if sessionKeys, err = readSessionKeys(f.sessionKey); err != nil {
			return err
		}
	}
	store, closeStore, err := gatewayStore(e, f.state, logger)
	if err != nil {
		return err
	}
	defer closeStore()
	ended, err := gatewayEnded(e, f.state, logger)
	if err != nil {
		return err
	}
	var token string
	if f.team.auth == "" {
		if token, err = launchToken(e, f); err != nil {
			return err
		}
	}
	tel, exp, stopExporters, err := startExporters(e, f.tel, f.state, logger)
	if err != nil {
		return err
	}
	defer stopExporters()
	out := &lockedWriter{w: e.stderr}
	rep := &gatewayReporter{w: out}
	// Every session of every route gets the decisions `mcpseal run`
	// makes: a lock as baseline, host policy, audit, before_connect; with
	// --auth, the legacy session's caller goes into its audit events.
	guard := func(route string, id pin.Identity, spec *httpgw.Route, who *oauth.Identity) (httpgw.Guard, error) {
		pol := spec.Policy
		if pol == "" {
			pol = f.policy
		}
		// The route's own posture: the lock must enforce (or not) as the
		// route's gate does.
		routePosture, err := spec.PostureOr(posture)
		if err != nil {
			return httpgw.Guard{}, err
		}
		g, err := buildGuard(e, hostSpec{id: id, name: spec.Name, argv: spec.Command, url: spec.URL,
			lock: runLockFlags{path: spec.Lock}, policy: pol, posture: routePosture, who: who, identityChecked: f.team.auth != "", pins: store, state: f.state, tel: tel, export: exp}, logger.With("route", route))
		if err != nil {
			return httpgw.Guard{}, err
		}
		gd := httpgw.Guard{Hooks: g.hooks, Refusal: g.refusal, ConfirmTimeout: g.confirmTimeout, Close: g.close}
		if spec.Lock != "" {
			gd.Pins = g.baseline
			gd.Argv = g.argv
		}
		return gd, nil
	}
	cfg := httpgw.Config{
		Routes:       routes,
		Token:        token,
		AllowOrigins: f.allowOrigins,
		Pins:         store,
		Posture:      posture,
		Limits:       httpgw.Limits{MaxBody: f.maxBody, VerifyTimeout: f.verifyTimeout},
		Logger:       logger,
		Stderr:       out,
		Getenv:       e.getenv,
		OnDrift:      rep.drift,
		OnVerified:   rep.verified,
		OnEvent: func(ev httpgw.Event) {
			logger.Warn("gateway event", "kind", ev.Kind, "route", ev.Route, "reason", ev.Reason, "status", ev.Status, "method", ev.Method)
		},
		Guard: func(route string, id pin.Identity, spec *httpgw.Route) (httpgw.Guard, error) {
			return guard(route, id, spec, nil)
		},
		GuardFor:    guard,
		SessionKeys: sessionKeys,
	}
	if ended != nil {
		cfg.EndedSessions = ended
	}
	l, err := team.start(e, f, routes, logger)
	if err != nil {
		if errors.Is(err, httpgw.ErrNotLoopback) {
			return &usageError{withHint(err, "the gateway is for clients on this machine; --bind takes 127.0.0.1 or ::1")}
		}
		return err
	}
	team.configure(&cfg)
	gw, err := httpgw.New(cfg)
	if err != nil {
		l.Close()
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	port := l.Addr().(*net.TCPAddr).Port
	names := routes.Names()
	for i, n := range names {
		names[i] = "/" + n
	}
	host, _, _ := net.SplitHostPort(team.addr)
	fmt.Fprintf(out, "mcpseal: gateway listening on %s://%s (routes: %s)\n", team.scheme(), net.JoinHostPort(host, strconv.Itoa(port)), strings.Join(names, ", "))
	return gw.Serve(ctx, l)
}

// launchToken makes the launch token and puts it where the user can take
// it: the token file, or a terminal. Never a log.
func launchToken(e *env, f gatewayFlags) (string, error) {
	if f.noToken {
		fmt.Fprintln(e.stderr, "mcpseal: WARNING: --no-token: ANY PROGRAM ON THIS MACHINE CAN USE THE GATEWAY'S ROUTES.")
		fmt.Fprintln(e.stderr, "mcpseal: WARNING: the Host, Origin and browser checks stay on; use --no-token only for local tools that cannot send headers.")
		return "", nil
	}
	token := httpgw.NewToken()
	if f.tokenFile != "" {
		if err := httpgw.WriteToken(f.tokenFile, token); err != nil {
			return "", err
		}
		fmt.Fprintf(e.stderr, "mcpseal: launch token written to %s (mode 0600)\n", f.tokenFile)
		return token, nil
	}
	if fd, ok := e.stderr.(interface{ Fd() uintptr }); ok && term.IsTerminal(int(fd.Fd())) {
		fmt.Fprintf(e.stderr, "mcpseal: launch token (shown once): %s\n", token)
		return token, nil
	}
	return "", withHint(errors.New("no --token-file and stderr is not a terminal: the launch token would end up in a log"), "pass --token-file PATH (written 0600), or --no-token for local tools that cannot send headers")
}

func validOrigin(o string) bool {
	scheme, rest, ok := strings.Cut(o, "://")
	return ok && (scheme == "http" || scheme == "https") && rest != "" && !strings.ContainsAny(rest, "/?#@ ")
}

// lockedWriter serialises writes from concurrent sessions.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// gatewayReporter writes the gate's findings for every route, as run does.
type gatewayReporter struct {
	mu sync.Mutex
	w  io.Writer
}

func (g *gatewayReporter) drift(route string, d gate.DriftReport) {
	g.mu.Lock()
	defer g.mu.Unlock()
	fmt.Fprintf(g.w, "\nmcpseal: route /%s:\n", route)
	(&reporter{w: g.w, id: d.Identity}).drift(d)
}

func (g *gatewayReporter) verified(route string, id pin.Identity, profile string, o pin.Outcome, c *contract.Contract) {
	g.mu.Lock()
	defer g.mu.Unlock()
	(&reporter{w: g.w, id: id}).verified(profile, o, c)
}
