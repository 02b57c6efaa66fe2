package httpgw

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/egress"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/oauth"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/sessionid"
	"github.com/mcpseal/mcpseal/stdio"
)

// modernCooldown is how long a closed modern session keeps answering (with
// its closure error) before the next request starts a new one: a blocked
// route must not start a server for every request of a busy client.
const modernCooldown = time.Second

// route is one served route at run time.
type route struct {
	gw       *Gateway
	name     string
	spec     *Route
	id       pin.Identity
	posture  pin.Posture
	endpoint *egress.Endpoint // url routes
	// bindings are the x-mcp-header bindings learned from the tools/list
	// answers that passed, for the front door's header checks.
	bindings *egress.Bindings

	mu     sync.Mutex
	modern *session
	// discoverRefused: the route's server refused a client's
	// server/discover in this gateway's stateless session. The client's
	// fallback initialize opens a legacy session of its own, whose gate
	// must know it to report the downgrade (gate.Config.DiscoverRefused).
	discoverRefused atomic.Bool
}

// Identity returns the pin-store identity of a route: its "name", else
// the URL of a url route, else the command line as `mcpseal run` without
// --name would use.
func (r *Route) Identity() pin.Identity {
	switch {
	case r.Name != "":
		return pin.IdentityForName(r.Name)
	case r.URL != "":
		return pin.IdentityForName(r.URL)
	}
	return pin.IdentityForArgv(r.Command)
}

// PostureOr is the route's own posture, or def when it names none. Every
// decision of the route's sessions (the gate's, a lock's) must read this
// one posture.
func (r *Route) PostureOr(def pin.Posture) (pin.Posture, error) {
	if r.Posture == "" {
		return def, nil
	}
	return pin.ParsePosture(r.Posture)
}

func newRoute(gw *Gateway, name string, spec *Route) (*route, error) {
	p, err := spec.PostureOr(gw.cfg.Posture)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", name, err)
	}
	rt := &route{gw: gw, name: name, spec: spec, id: spec.Identity(), posture: p, bindings: egress.NewBindings()}
	if spec.URL == "" {
		return rt, nil
	}
	opts := egress.Options{
		Private:  spec.Private,
		Server:   gate.ServerRef{ID: rt.id.ID, Label: rt.id.Label},
		Resolver: gw.cfg.Resolver,
		RootCAs:  gw.cfg.RootCAs,
		Logger:   gw.log.With("route", name),
		OnFailure: func(f egress.Failure) {
			gw.event(Event{Kind: EventUpstream, Route: name, Reason: f.Reason, Status: f.Status, Method: f.Method, Failure: &f})
		},
	}
	if c := spec.Credential; c != nil {
		cred, err := egress.LoadCredential(c.Header, c.File, c.Env, gw.cfg.Getenv)
		if err != nil {
			return nil, fmt.Errorf("route %s: %w", name, err)
		}
		opts.Credential = cred
	}
	ep, err := egress.NewEndpoint(spec.URL, opts)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", name, err)
	}
	rt.endpoint = ep
	return rt, nil
}

// start starts the route's server for one session; a session the host
// refused before connecting gets a server that never starts.
func (rt *route) start(g Guard, resume *sessionid.Claims, tracer HeaderTracer) (stdio.Server, error) {
	if g.Refusal != nil {
		return stdio.Nothing(), nil
	}
	if rt.endpoint != nil {
		var up *egress.Upstream
		if resume != nil {
			up = rt.endpoint.Resume(resume.Upstream, resume.Protocol)
		} else {
			up = rt.endpoint.Open()
		}
		if tracer != nil {
			up.SetTrace(tracer.UpstreamHeaders)
		}
		return up, nil
	}
	if g.Argv != nil {
		return stdio.StartChild(g.Argv, nil, "")
	}
	return stdio.StartChild(rt.spec.Command, nil, "")
}

// guard asks the host for the session's decisions (Config.Guard).
func (rt *route) guard(who *oauth.Identity) (Guard, error) {
	if who != nil && rt.gw.cfg.GuardFor != nil {
		return rt.gw.cfg.GuardFor(rt.name, rt.id, rt.spec, who)
	}
	if rt.gw.cfg.Guard == nil {
		return Guard{}, nil
	}
	return rt.gw.cfg.Guard(rt.name, rt.id, rt.spec)
}

// newGate is the gate of session s, configured as `mcpseal run`
// configures it, plus the team gateway's per-caller decisions.
func (rt *route) newGate(gd Guard, s *session) *gate.Session {
	gw := rt.gw
	pins := gw.cfg.Pins
	if gd.Pins != nil {
		pins = gd.Pins
	}
	cfg := gate.Config{
		Identity:        rt.id,
		Posture:         rt.posture,
		Pins:            pins,
		Hooks:           gd.Hooks,
		ConfirmTimeout:  gd.ConfirmTimeout,
		Limits:          gate.Limits{VerifyTimeout: gw.lim.VerifyTimeout},
		IDPrefix:        gate.NewIDPrefix(),
		DiscoverRefused: rt.discoverRefused.Load(),
		Logger:          gw.log.With("route", rt.name, "server", rt.id.Label),
	}
	if gw.cfg.OnDrift != nil {
		cfg.OnDrift = func(d gate.DriftReport) { gw.cfg.OnDrift(rt.name, d) }
	}
	if gw.cfg.OnVerified != nil {
		cfg.OnVerified = func(profile string, o pin.Outcome, c *contract.Contract) {
			gw.cfg.OnVerified(rt.name, rt.id, profile, o, c)
		}
	}
	if gw.cfg.Auth != nil {
		cfg.CallerOf, cfg.Hidden, cfg.Admit = s.callerOf, s.hidden, s.admit
	}
	// The shared session's profiles come from every caller (profiles.go).
	cfg.EvictIdleProfiles = s.modern
	g := gate.New(cfg)
	if gd.Refusal != nil {
		g.Refuse(*gd.Refusal)
	}
	return g
}

// modernSession returns the route's shared session for 2026-07-28
// requests, starting a new one when the last has closed.
func (rt *route) modernSession() (*session, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if s := rt.modern; s != nil {
		at, done := s.finished()
		if !done || time.Since(at) < modernCooldown {
			return s, nil
		}
		go s.shutdown()
		rt.modern = nil
	}
	s, err := newSession(rt, "", true, nil, nil)
	if err != nil {
		return nil, err
	}
	rt.modern = s
	return s, nil
}

// dropModern detaches the modern session, for Close.
func (rt *route) dropModern() *session {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	s := rt.modern
	rt.modern = nil
	return s
}
