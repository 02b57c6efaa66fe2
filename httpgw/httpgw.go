// Package httpgw is mcpseal's loopback Streamable HTTP gateway: a front
// door that local MCP clients reach at http://127.0.0.1:PORT/<route>, and
// behind each route one upstream — a stdio server it starts, or a remote
// server reached through package egress — with the same session gate
// (package gate) that `mcpseal run` puts in front of a stdio server.
//
// # The front door
//
// Every request passes, in order:
//
//  1. Host is exactly 127.0.0.1:PORT, localhost:PORT or [::1]:PORT (DNS
//     rebinding: a page on evil.example that rebinds its name to 127.0.0.1
//     still sends Host: evil.example:PORT).
//  2. An Origin header is refused unless that exact origin was allowed
//     (--allow-origin); a request with no Origin but a Sec-Fetch-Site other
//     than "none" is a browser's and is refused too. MCP clients built on
//     Node's fetch, the SDKs or curl send neither.
//  3. The launch token, new on every start, as "Authorization: Bearer
//     TOKEN" (unless the gateway runs with --no-token). The inbound
//     Authorization header is the gateway's own and is never forwarded:
//     upstream requests are built from nothing (package egress).
//  4. POST bodies must be Content-Type application/json and are read
//     through a size cap before any parsing; a JSON-RPC batch is refused.
//
// Refusals are HTTP 403 for the security checks (1–3) and 4xx for the
// others, always with a JSON-RPC error body: code CodeForbidden (-32015),
// data.reason one of the Reason constants. The listener binds 127.0.0.1 or
// ::1 only (Listen refuses anything else).
//
// # Streamable HTTP, both generations
//
// Legacy (2024-11-05 to 2025-11-25): an initialize POST opens a session
// with its own upstream (a new child for a command route, a new upstream
// session for a url route) and its own gate.Session, exactly as each
// `mcpseal run` has; the answer carries Mcp-Session-Id, which every later
// POST, the GET stream and DELETE name. Answers come on an event stream
// (flushed per event, the headers with the first) to a client that takes
// one, and as JSON to a client that takes only JSON (Accept is read with
// its qualities: q=0 refuses a form); server requests and notifications go on the stream of the
// request they relate to (progress tokens) or the newest open stream, else
// the GET stream. Event ids let a client whose POST stream broke before
// the answer resume it with a GET and Last-Event-ID. DELETE ends the
// session; idle sessions expire.
//
// 2026-07-28 (stateless): a request whose params._meta carries the
// protocol version needs no session. Its MCP-Protocol-Version, Mcp-Method,
// Mcp-Name and Mcp-Param-* headers must match the body (HeaderMismatch
// -32020, HTTP 400 otherwise). All modern requests of a route share one
// gate.Session and one upstream, so the gate's verification state is kept
// per route and per profile: the first request under a profile is held
// while the gate verifies that profile's contract, later ones are checked
// against it, and every listing is checked for the life of the gateway. To
// share one session among independent clients the gateway gives each
// request a gateway-unique JSON-RPC id (and progress token) on the way in
// and restores the client's exact bytes on the way out; nothing else in
// the message changes, so the headers derived from the body still match.
// When that shared session closes (blocked on drift, held, the server
// exited) the next modern request starts a new one, which verifies afresh
// against the pin store — as a new `mcpseal run` session would.
package httpgw

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/egress"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/oauth"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/sessionid"
)

// Limits bound the gateway. Zero fields take the defaults.
type Limits struct {
	// MaxBody bounds one POST body: one message, the stdio frame limit.
	MaxBody int
	// MaxSessions bounds the legacy sessions open at once, over all routes.
	MaxSessions int
	// IdleTimeout closes a legacy session nobody used for that long.
	IdleTimeout time.Duration
	// RequestTimeout bounds how long one POST waits for its answer.
	RequestTimeout time.Duration
	// VerifyTimeout bounds the gate's own listing (gate.Limits).
	VerifyTimeout time.Duration
	// StopGrace is how long a server may take to stop, per stage.
	StopGrace time.Duration
}

// DefaultLimits are the defaults of Limits.
var DefaultLimits = Limits{
	MaxBody:        jsonrpc.DefaultMaxFrame,
	MaxSessions:    64, // a handful of clients with a few sessions each
	IdleTimeout:    30 * time.Minute,
	RequestTimeout: egress.DefaultRequestTimeout,
	VerifyTimeout:  gate.DefaultLimits.VerifyTimeout,
	StopGrace:      2 * time.Second,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxBody > 0 {
		d.MaxBody = l.MaxBody
	}
	if l.MaxSessions > 0 {
		d.MaxSessions = l.MaxSessions
	}
	if l.IdleTimeout > 0 {
		d.IdleTimeout = l.IdleTimeout
	}
	if l.RequestTimeout > 0 {
		d.RequestTimeout = l.RequestTimeout
	}
	if l.VerifyTimeout > 0 {
		d.VerifyTimeout = l.VerifyTimeout
	}
	if l.StopGrace > 0 {
		d.StopGrace = l.StopGrace
	}
	return d
}

// Config configures a Gateway.
type Config struct {
	Routes *Routes
	// Token is the launch token; "" turns the check off (--no-token).
	Token        string
	AllowOrigins []string
	Pins         gate.PinStore
	// Posture applies to routes that name none.
	Posture pin.Posture
	Limits  Limits
	Logger  *slog.Logger
	// Stderr receives command routes' stderr (bounded per session).
	Stderr io.Writer
	// Getenv reads credential variables; nil uses no environment.
	Getenv func(string) string

	// OnDrift and OnVerified report the gate's findings, per route.
	OnDrift    func(route string, d gate.DriftReport)
	OnVerified func(route string, id pin.Identity, profile string, outcome pin.Outcome, c *contract.Contract)
	// OnEvent receives refusals and upstream failures, for audit. It must
	// not block.
	OnEvent func(Event)
	// Guard, when set, gives each new session of a route the host's
	// decisions beyond the pin check (a lock as baseline, policy and audit
	// hooks, a before_connect refusal), exactly as `mcpseal run` makes
	// them. An error refuses the session.
	Guard func(route string, id pin.Identity, spec *Route) (Guard, error)

	// Resolver and RootCAs are handed to package egress (tests, private CAs).
	Resolver egress.Resolver
	RootCAs  *x509.CertPool

	// Auth, when set, makes the gateway an OAuth resource server (auth.go):
	// every request needs an access token for its route, and Host may also
	// be the authority of the configured resource URL.
	Auth *oauth.Verifier
	// Identities decides listings and calls per caller (with Auth).
	Identities IdentityPolicy
	// TrustedProxies, when set, are the only peers requests may come from
	// (TLS terminated by a load balancer in front).
	TrustedProxies []netip.Prefix
	// GuardFor, when set, is used instead of Guard for a legacy session
	// opened by an authenticated caller (the audit names who).
	GuardFor func(route string, id pin.Identity, spec *Route, who *oauth.Identity) (Guard, error)
	// SessionKeys, when set, seal url routes' legacy session ids so that
	// any replica holding the same keys can continue them (sealed.go).
	SessionKeys *sessionid.Keys
	// EndedSessions records the sealed ids whose client ended them, for
	// every replica (ended.go); nil keeps them in this process's memory.
	EndedSessions EndedSessions
}

// Guard is the host's decisions for one session of a route.
type Guard struct {
	// Pins replaces Config.Pins as the session's baseline (a team lock).
	Pins gate.PinStore
	// Hooks are the session's listing and call decisions.
	Hooks gate.Hooks
	// Refusal, when set, is a before_connect refusal: the server is never
	// started and every request gets it.
	Refusal *gate.Refusal
	// ConfirmTimeout bounds a person's answer to a confirmation.
	ConfirmTimeout time.Duration
	// Argv replaces a command route's command (the lock's version).
	Argv []string
	// Close is called once when the session ends.
	Close func()
}

// A HeaderTracer is a gate.Observer that also takes trace context from
// HTTP (telemetry.Session): the W3C traceparent and tracestate headers of
// each client request, just before the gate takes it, and the headers to
// send with a request forwarded to a url route's server.
type HeaderTracer interface {
	HeaderContext(traceparent, tracestate []string)
	UpstreamHeaders(id []byte) (traceparent, tracestate string)
}

// Event is one refusal or failure, with no message content in it.
type Event struct {
	Kind    string // EventRefused or EventUpstream
	Route   string
	Reason  string
	Status  int
	Method  string
	Failure *egress.Failure
}

// Event kinds.
const (
	EventRefused  = "refused"
	EventUpstream = "upstream-failure"
)

// Gateway serves the routes. Create it with New, serve it with Serve.
type Gateway struct {
	cfg    Config
	lim    Limits
	log    *slog.Logger
	port   int
	routes map[string]*route

	mu       sync.Mutex
	sessions map[string]*session            // legacy sessions by Mcp-Session-Id
	reserved map[string]string              // the caller of each slot whose session is starting
	resuming map[string]chan struct{}       // sealed sessions being continued here, closed when done
	profiles map[string]map[string]struct{} // profiles each caller brought into a route's shared session (profiles.go)
	closed   bool
	stop     chan struct{}
	wg       sync.WaitGroup
}

// New checks the routes and loads their credentials. Nothing starts
// until the first request.
func New(cfg Config) (*Gateway, error) {
	if cfg.Routes == nil || len(cfg.Routes.Routes) == 0 {
		return nil, errors.New("no routes")
	}
	if cfg.Pins == nil {
		return nil, errors.New("no pin store")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.EndedSessions == nil {
		cfg.EndedSessions = processEnded
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.Posture == "" {
		cfg.Posture = pin.Guard
	}
	gw := &Gateway{cfg: cfg, lim: cfg.Limits.withDefaults(), log: cfg.Logger, routes: make(map[string]*route), sessions: make(map[string]*session), reserved: make(map[string]string), resuming: make(map[string]chan struct{}), profiles: make(map[string]map[string]struct{}), stop: make(chan struct{})}
	for _, name := range cfg.Routes.Names() {
		rt, err := newRoute(gw, name, cfg.Routes.Routes[name])
		if err != nil {
			return nil, err
		}
		gw.routes[name] = rt
	}
	return gw, nil
}

// Serve serves l until ctx ends, then closes every session.
func (gw *Gateway) Serve(ctx context.Context, l net.Listener) error {
	gw.port = l.Addr().(*net.TCPAddr).Port
	srv := &http.Server{
		Handler:           gw,
		ReadHeaderTimeout: 10 * time.Second,
		// A keep-alive connection with no request is let go: on a network
		// listener, peers could otherwise hold connections open for ever.
		// (No ReadTimeout or WriteTimeout: event streams last.)
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(gw.log.Handler(), slog.LevelDebug),
	}
	gw.wg.Add(1)
	go func() { defer gw.wg.Done(); gw.janitor() }()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		gw.Close()
		return err
	}
	shut, cancel := context.WithTimeout(context.Background(), gw.lim.StopGrace)
	defer cancel()
	_ = srv.Shutdown(shut)
	_ = srv.Close()
	gw.Close()
	return nil
}

// SetPort tells a gateway served by another http.Server its port (for the
// Host check). Serve sets it itself.
func (gw *Gateway) SetPort(port int) { gw.port = port }

// Close ends every session and stops every server.
func (gw *Gateway) Close() {
	gw.mu.Lock()
	if gw.closed {
		gw.mu.Unlock()
		return
	}
	gw.closed = true
	close(gw.stop)
	all := make([]*session, 0, len(gw.sessions))
	for _, s := range gw.sessions {
		if s != nil {
			all = append(all, s)
		}
	}
	clear(gw.sessions)
	gw.mu.Unlock()
	for _, rt := range gw.routes {
		if s := rt.dropModern(); s != nil {
			all = append(all, s)
		}
	}
	for _, s := range all {
		s.shutdown()
	}
	for _, s := range all {
		s.waitStopped(3 * gw.lim.StopGrace)
	}
	gw.wg.Wait()
}

// ServeHTTP is the front door.
func (gw *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	if f := gw.frontDoor(r); f != nil {
		gw.writeRefusal(w, r, "", f)
		return
	}
	if gw.cors(w, r) {
		return
	}
	if gw.cfg.Auth != nil {
		var ok bool
		if r, ok = gw.authenticate(w, r); !ok {
			return
		}
	}
	rt := gw.routes[strings.TrimSuffix(name, "/")]
	if rt == nil || r.URL.RawQuery != "" {
		gw.writeRefusal(w, r, "", refuse(http.StatusNotFound, ReasonRoute, "no such route"))
		return
	}
	switch r.Method {
	case http.MethodPost:
		gw.post(w, r, rt)
	case http.MethodGet:
		gw.get(w, r, rt)
	case http.MethodDelete:
		gw.delete(w, r, rt)
	default:
		gw.writeRefusal(w, r, rt.name, refuse(http.StatusMethodNotAllowed, ReasonMethod, "use POST, GET or DELETE"))
	}
}

func (gw *Gateway) event(e Event) {
	if gw.cfg.OnEvent != nil {
		gw.cfg.OnEvent(e)
	}
}

// janitor closes idle legacy sessions.
func (gw *Gateway) janitor() {
	t := time.NewTicker(min(gw.lim.IdleTimeout/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-gw.stop:
			return
		case now := <-t.C:
			var idle []*session
			gw.mu.Lock()
			for id, s := range gw.sessions {
				if s != nil && s.idleSince(now) > gw.lim.IdleTimeout {
					delete(gw.sessions, id)
					idle = append(idle, s)
				}
			}
			gw.mu.Unlock()
			for _, s := range idle {
				gw.log.Info("idle session closed", "route", s.rt.name)
				s.shutdown()
			}
		}
	}
}
