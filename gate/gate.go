// Package gate is mcpseal's session gate: a transport-independent state
// machine that sits between one MCP client and one MCP server.
//
// For every JSON-RPC message from either side the gate decides to forward
// it (its original bytes, untouched), hold it, or answer it itself. It never
// rewrites a message it forwards.
//
// # The session
//
// Until the server's contract is verified, nothing the server says reaches
// the client and nothing the client asks reaches the server, except the
// handshake itself (legacy initialize, or a 2026-07-28 server/discover
// probe). When the handshake result arrives the gate holds it and lists the
// contract itself — every page of tools/list, prompts/list, resources/list
// and resources/templates/list that the server's capabilities offer — with
// request ids of its own that can never collide with the client's. The
// contract is then checked against the pin store:
//
//   - it matches (or is pinned for the first time): the held result is
//     released, then every queued message, in order;
//   - it drifted: the session is blocked; no queued message reaches the
//     server and every waiting request gets the block error (CodeBlocked).
//
// For the rest of the session every listing response the client receives
// (every page of every list method, and any repeated initialize or
// server/discover result) is checked against the verified contract before
// it is delivered, so a server can neither show the check one contract and
// the client another, nor change its contract mid-session.
//
// # Profiles
//
// A server may legitimately list more to a client that declares more
// capabilities. Pins are therefore kept per profile: the protocol version
// and the names of the capabilities the client declared (see
// pin.ProfileKey). A modern (2026-07-28) client carries its profile in every
// request's _meta; a request under a profile the session has not verified
// yet is held while the gate verifies that profile.
//
// # Concurrency
//
// A Session is not safe for concurrent use: a transport feeds it one
// message at a time and writes out what it returns, in order.
package gate

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// Side is where a frame goes.
type Side int

const (
	ToClient Side = iota
	ToServer
)

func (s Side) String() string {
	if s == ToClient {
		return "client"
	}
	return "server"
}

// Out is one frame the transport must write, in order.
type Out struct {
	To    Side
	Frame []byte
	env   Envelope // what the gate read of Frame; Kind Invalid when it did not keep it
}

// Envelope is what a transport or an observer needs of an emitted frame to
// route or measure it.
type Envelope struct {
	Kind  jsonrpc.Kind
	ID    []byte // raw, aliasing the frame; nil when it has none
	Key   string // jsonrpc.IDKey(ID)
	Error []byte // a response's error member, raw; nil otherwise
}

func envelopeOf(m jsonrpc.Message, key string) Envelope {
	return Envelope{Kind: m.Kind, ID: m.ID, Key: key, Error: m.Error}
}

// Envelope returns o's envelope: as the gate read the frame when it passes
// a peer's frame on unchanged, else as jsonrpc.Peek reads it. It is false
// only for a frame Peek refuses, which the gate never emits.
func (o Out) Envelope() (Envelope, bool) {
	if o.env.Kind != jsonrpc.Invalid {
		return o.env, true
	}
	m, err := jsonrpc.Peek(o.Frame)
	if err != nil {
		return Envelope{}, false
	}
	var key string
	if m.ID != nil {
		key = jsonrpc.IDKey(m.ID)
	}
	return envelopeOf(m, key), true
}

// PinStore is what the gate needs of the pin store.
type PinStore interface {
	Observe(id pin.Identity, o pin.Observation, c *contract.Contract, posture pin.Posture, now time.Time) (pin.Result, error)
}

// A PinWatcher is a PinStore that others change too (replicas sharing one
// database) and that can tell, without I/O, whether server id's pin state
// may have changed: Generation returns a number that moves whenever it
// may have (a notification, a missed one, a lost connection). A session
// checks its next listing against the store again when the number moved
// since it verified, even when the listing shows nothing new to it. A
// store that only this process changes need not implement it.
type PinWatcher interface {
	Generation(id string) uint64
}

// DriftReport is handed to Config.OnDrift for the terminal.
type DriftReport struct {
	Identity pin.Identity
	Profile  string
	Result   pin.Result
	Observed *contract.Contract
	// Forwarded is true under the monitor posture: the drift was recorded
	// and reported but the traffic was forwarded.
	Forwarded bool
	// MidSession is true when a listing inside a verified session drifted.
	MidSession bool
}

// Limits bound everything the gate holds. Zero fields take the defaults.
type Limits struct {
	// MaxQueued is how many client messages may wait for verification.
	MaxQueued int
	// MaxQueuedBytes bounds their total size.
	MaxQueuedBytes int
	// MaxHeld is how many server messages may wait for verification.
	MaxHeld int
	// MaxHeldBytes bounds their total size.
	MaxHeldBytes int
	// MaxPending is how many forwarded client requests may await answers.
	MaxPending int
	// MaxPages bounds the pages of one listing.
	MaxPages int
	// MaxDefinitions bounds the definitions of one contract.
	MaxDefinitions int
	// MaxListingBytes bounds the bytes of the listing pages one
	// verification round reads: the gate holds every page until its
	// verdict, so without it only the pages, the frame size and the
	// time would bound them.
	MaxListingBytes int
	// MaxProfiles bounds the client profiles one session verifies: each
	// costs a verification round, a contract in memory and, when new, a
	// pin.
	MaxProfiles int
	// VerifyTimeout bounds the gate's own listing, from the handshake
	// result to the verdict.
	VerifyTimeout time.Duration
}

// DefaultLimits are generous for real servers and small enough that a
// hostile one cannot make the gate hold unbounded state.
var DefaultLimits = Limits{
	MaxQueued:      1024,     // a client that sends more before the handshake completes is misbehaving
	MaxQueuedBytes: 64 << 20, // four 16 MiB frames
	MaxHeld:        1024,
	MaxHeldBytes:   64 << 20,
	MaxPending:     4096,   // in-flight requests of a busy agent, with room to spare
	MaxPages:       1000,   // 1000 pages of even 10 items is more than any server lists
	MaxDefinitions: 100000, // ten times the largest listings seen in the wild
	// A listing of 10,000 realistic tools is about 10 MB; ten times that,
	// and a 100,000-definition contract of 1.3 KB each.
	MaxListingBytes: 128 << 20,
	MaxProfiles:     16, // a client declares one set of capabilities; a few versions at most
	VerifyTimeout:   30 * time.Second,
}

// Config configures a Session.
type Config struct {
	Identity pin.Identity
	Posture  pin.Posture
	Pins     PinStore
	Limits   Limits
	// IDPrefix makes the gate's own request ids unique; use a random value
	// per session (see NewIDPrefix).
	IDPrefix string
	// Now returns the current time. Defaults to time.Now.
	Now func() time.Time
	// Logger receives operational logs. Defaults to a discarding logger.
	Logger *slog.Logger
	// OnDrift, when set, is called for every drift, for the terminal.
	OnDrift func(DriftReport)
	// OnVerified, when set, is called when a profile verifies.
	OnVerified func(profile string, outcome pin.Outcome, c *contract.Contract)
	// Hooks are the host's listing and call decisions (see Hooks).
	Hooks Hooks
	// Dispatch runs work off the transport's lock and then feeds its
	// verdict to resume under the lock, writing out what resume returns.
	// Without it, a hook that answers Later is refused (fail closed).
	Dispatch func(work func() Verdict, resume func(Verdict) []Out)
	// ConfirmTimeout bounds how long a person may take to answer a
	// confirmation (default 2 minutes).
	ConfirmTimeout time.Duration
	// DiscoverRefused says the server already refused a server/discover
	// probe of this client before the session began: the HTTP gateway's
	// stateless session answered the probe, and the client's fallback
	// initialize opens this one. A legacy session then reports the
	// fallback to the pin store, as if the probe had come through it.
	DiscoverRefused bool
	// CallerOf, when set, names the authenticated caller of a client
	// request (by its id key, jsonrpc.IDKey), for a transport that serves
	// several callers in one session (the HTTP gateway's 2026-07-28
	// session): every event about that request carries it (Event.Caller).
	CallerOf func(request string) *Caller
	// Hidden, when set, reports whether the caller of a client request
	// may not see tool (host policy per caller). A tools/call of a hidden
	// tool is answered exactly as a call of a tool the verified contract
	// does not have, under every posture, so that the caller cannot tell
	// the two apart.
	Hidden func(request, tool string) bool
	// Admit, when set, takes one call of tool by the caller of a client
	// request (per-caller rate limits, confirmations a shared session
	// cannot ask): nil lets the call go on to Hooks.Call, a refusal
	// answers it. It runs only for a tool that is in the verified
	// contract and not hidden from the caller (and for a call monitor
	// forwards), so that a made-up name and a hidden tool are never
	// charged and answer alike. It must not block.
	Admit func(request, tool string) *Refusal
	// EvictIdleProfiles lets a 2026-07-28 session that holds
	// Limits.MaxProfiles verified profiles make room for a new one by
	// forgetting the least recently used profile with no request in
	// flight (it is verified again, against the pin, when it comes back).
	// For a session several callers share (the HTTP gateway's), so that
	// the profiles some callers declared cannot lock every other caller's
	// new profile out. Without it the new profile is refused.
	EvictIdleProfiles bool
}

type phase int

const (
	phaseIdle      phase = iota // no handshake yet
	phaseHandshake              // the client's initialize or server/discover is at the server
	phaseListing                // the gate's own verification round is running
	phaseOpen                   // verified: messages flow, listings are checked
	phaseClosed                 // blocked, held, unverified or the server exited
)

// Session is the gate for one client–server session.
type Session struct {
	cfg Config
	log *slog.Logger
	// about is the id key of the client request the current step acts
	// for, when an event site cannot name it (a drift found in a listing
	// that request asked for).
	about string

	phase   phase
	closure *closure
	out     []Out

	// Client messages waiting for verification, in order.
	queue      [][]byte
	queueBytes int
	// replay holds the queued messages release has yet to replay;
	// replaying is the one it is replaying (nil after it).
	replay    [][]byte
	replaying []byte
	// pages are the last round's own listing pages, kept for the
	// client's first listing (pages.go).
	pages *verifiedPages
	// Server messages to the client waiting for verification, in order.
	held      [][]byte
	heldBytes int

	// Client requests forwarded to the server, by jsonrpc.IDKey.
	pending map[string]*pendingRequest
	// The gate's own requests, by jsonrpc.IDKey.
	own    map[string]*ownRequest
	nextID int

	round *round

	// legacy is set once an initialize handshake succeeded; its profile
	// applies to every request of the session.
	legacy        bool
	legacyProfile string
	legacyVersion string
	// legacyOffers are the listing kinds the handshake's capabilities
	// offered (Continuation).
	legacyOffers []contract.Kind
	// discoverRefused: the client's server/discover probe got an error
	// and it fell back to initialize (a downgrade the pin store judges).
	discoverRefused bool
	// dropInitialized: the gate sent notifications/initialized itself, so
	// the client's own copy is not forwarded again.
	dropInitialized bool

	verified map[string]*contract.Contract
	// driftPins are, for a profile whose verified contract is a drift the
	// monitor posture forwarded, the pinned contract it drifted from, so
	// that call decisions can read the riskier of the two (CallInfo.Pinned).
	driftPins map[string]*contract.Contract
	seqs      *sequences
	// generation is the pin store's generation (PinWatcher) when the
	// session last verified against it.
	generation uint64

	// lastUse orders the verified profiles by their last request
	// (useSeq counts requests), for EvictIdleProfiles.
	lastUse map[string]uint64
	useSeq  uint64
	// caps are the client's capability names per profile.
	caps map[string][]string
	// obs is what each verified or verifying profile was observed as.
	obs map[string]pin.Observation
	// metaCache: what modern requests' _meta declared (see metaCache).
	metaCache metaCache
	// asks are the gate's own requests to the client (confirmations), by
	// jsonrpc.IDKey, with the key of the held call they decide.
	asks map[string]string
	// asked are the calls a person is being asked about through an
	// input_required answer (2026-07-28), by the requestState they were
	// given (mrtr.go).
	asked map[string]*askedCall
	// serverReqs are the server's requests delivered to the client and not
	// yet answered, by jsonrpc.IDKey: a client response goes to the server
	// only when it answers one of them.
	serverReqs map[string]struct{}
	// deadlines of held calls, by the held call's key.
	holds map[string]time.Time
	// deadlines of forwarded calls, by the call's key.
	timeouts map[string]callTimeout
	// abandoned are the keys of forwarded requests the gate gave up on
	// (a call timeout, Cancel) and told the server to cancel, until the
	// server answers them: a late answer is dropped, not routed to a new
	// request under the same id. At most Limits.MaxPending, oldest first
	// out (order).
	abandoned abandonedIDs
}

// abandonedIDs is a bounded set of request keys, in the order they came.
type abandonedIDs struct {
	set   map[string]struct{}
	order []string
}

func (a *abandonedIDs) add(key string, max int) {
	if _, ok := a.set[key]; ok {
		return
	}
	if a.set == nil {
		a.set = make(map[string]struct{})
	}
	for len(a.order) >= max && len(a.order) > 0 {
		delete(a.set, a.order[0])
		a.order = a.order[1:]
	}
	a.set[key] = struct{}{}
	a.order = append(a.order, key)
}

func (a *abandonedIDs) has(key string) bool {
	_, ok := a.set[key]
	return ok
}

// take removes key and reports whether it was there.
func (a *abandonedIDs) take(key string) bool {
	if _, ok := a.set[key]; !ok {
		return false
	}
	delete(a.set, key)
	for i, k := range a.order {
		if k == key {
			a.order = append(a.order[:i], a.order[i+1:]...)
			break
		}
	}
	return true
}

// New returns a Session ready for the first message.
func New(cfg Config) *Session {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.Posture == "" {
		cfg.Posture = pin.Guard
	}
	if cfg.ConfirmTimeout <= 0 {
		cfg.ConfirmTimeout = 2 * time.Minute
	}
	return &Session{
		cfg:             cfg,
		log:             cfg.Logger,
		discoverRefused: cfg.DiscoverRefused,
		pending:         make(map[string]*pendingRequest),
		own:             make(map[string]*ownRequest),
		verified:        make(map[string]*contract.Contract),
		driftPins:       make(map[string]*contract.Contract),
		seqs:            newSequences(),
		caps:            make(map[string][]string),
		lastUse:         make(map[string]uint64),
		obs:             make(map[string]pin.Observation),
		metaCache:       metaCache{byRaw: make(map[string]*modernMeta)},
		asks:            make(map[string]string),
		asked:           make(map[string]*askedCall),
		serverReqs:      make(map[string]struct{}),
		holds:           make(map[string]time.Time),
		timeouts:        make(map[string]callTimeout),
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxQueued > 0 {
		d.MaxQueued = l.MaxQueued
	}
	if l.MaxQueuedBytes > 0 {
		d.MaxQueuedBytes = l.MaxQueuedBytes
	}
	if l.MaxHeld > 0 {
		d.MaxHeld = l.MaxHeld
	}
	if l.MaxHeldBytes > 0 {
		d.MaxHeldBytes = l.MaxHeldBytes
	}
	if l.MaxPending > 0 {
		d.MaxPending = l.MaxPending
	}
	if l.MaxPages > 0 {
		d.MaxPages = l.MaxPages
	}
	if l.MaxDefinitions > 0 {
		d.MaxDefinitions = l.MaxDefinitions
	}
	if l.MaxListingBytes > 0 {
		d.MaxListingBytes = l.MaxListingBytes
	}
	if l.MaxProfiles > 0 {
		d.MaxProfiles = l.MaxProfiles
	}
	if l.VerifyTimeout > 0 {
		d.VerifyTimeout = l.VerifyTimeout
	}
	return d
}

// SetDispatch installs the transport's way of running slow decisions off
// its lock (see Config.Dispatch). Call it before the first message.
func (s *Session) SetDispatch(d func(work func() Verdict, resume func(Verdict) []Out)) {
	s.cfg.Dispatch = d
}

// Status reports how the session stands.
type Status struct {
	// Verified is true once at least one profile verified and the
	// session was not closed.
	Verified bool
	// Closed is true when the session stopped forwarding.
	Closed bool
	// Code and Reason say why it closed (CodeBlocked and "drift", ...).
	Code   int
	Reason string
}

// Status returns the session's state.
func (s *Session) Status() Status {
	st := Status{Verified: len(s.verified) > 0 && s.phase != phaseClosed}
	if s.phase == phaseClosed && s.closure != nil {
		st.Closed = true
		st.Code = s.closure.code
		st.Reason = s.closure.reason
	}
	return st
}

// DiscoverRefused reports whether the server refused a client's
// server/discover in this session.
func (s *Session) DiscoverRefused() bool { return s.discoverRefused }

// Deadline returns when Tick must next be called, or the zero time.
func (s *Session) Deadline() time.Time {
	var d time.Time
	if s.phase == phaseListing && s.round != nil {
		d = s.round.deadline
	}
	for _, h := range s.holds {
		if d.IsZero() || h.Before(d) {
			d = h
		}
	}
	for _, t := range s.timeouts {
		if d.IsZero() || t.at.Before(d) {
			d = t.at
		}
	}
	if s.pages != nil && (d.IsZero() || s.pages.until.Before(d)) {
		d = s.pages.until
	}
	if a := s.askedDeadline(); !a.IsZero() && (d.IsZero() || a.Before(d)) {
		d = a
	}
	return d
}

// Tick enforces deadlines.
func (s *Session) Tick() []Out {
	s.out = nil
	if s.phase == phaseListing && s.round != nil && !s.cfg.Now().Before(s.round.deadline) {
		s.log.Warn("contract verification timed out", "server", s.cfg.Identity.ID, "timeout", s.cfg.Limits.VerifyTimeout)
		s.closeUnverified(ReasonTimeout, fmt.Sprintf("mcpseal: server %s did not list its contract within %s", s.cfg.Identity.Label, s.cfg.Limits.VerifyTimeout))
	}
	s.expireHolds()
	s.pruneAsked()
	s.expireCalls()
	if s.pages != nil && !s.cfg.Now().Before(s.pages.until) {
		s.pages = nil
	}
	return s.flush()
}

// ServerClosed tells the gate that the server is gone: every request that
// waits for it gets CodeServerExited.
func (s *Session) ServerClosed() []Out {
	s.out = nil
	if s.phase != phaseClosed {
		d := s.errorData(ReasonServerExited)
		s.close(s.newClosure(CodeServerExited, fmt.Sprintf("mcpseal: server %s exited", s.cfg.Identity.Label), d))
	}
	return s.flush()
}

// FrameTooLarge tells the gate that side sent a frame over the limit,
// which the transport dropped unread.
func (s *Session) FrameTooLarge(from Side, limit int) []Out {
	s.out = nil
	msg := fmt.Sprintf("mcpseal: a message from the %s exceeded the %d-byte frame limit and was dropped (see --max-frame)", from, limit)
	d := marshalData(s.errorData(ReasonFrameTooLarge))
	switch {
	case from == ToClient:
		// The client's id is unknown: answer with a null id, as JSON-RPC
		// does for a request it cannot read.
		s.toClient(jsonrpc.NewError(nil, CodeRefused, msg, d))
	case s.phase == phaseListing || s.phase == phaseHandshake:
		s.closeUnverified(ReasonFrameTooLarge, msg)
	default:
		// Only a request the server has is one its frame may answer; with
		// more than one, which it answered is unknown.
		var key string
		n := 0
		for k, p := range s.pending {
			if !p.held {
				key, n = k, n+1
			}
		}
		if n == 1 {
			p := s.pending[key]
			s.forget(key)
			s.toClient(jsonrpc.NewError(p.id, CodeRefused, msg, d))
		}
	}
	return s.flush()
}

// forget drops every trace of a client request: pending, its call timeout,
// its confirmation hold and the confirmation asked for it.
func (s *Session) forget(key string) {
	delete(s.pending, key)
	delete(s.timeouts, key)
	delete(s.holds, key)
	for ak, k := range s.asks {
		if k == key {
			delete(s.asks, ak)
		}
	}
}

func (s *Session) flush() []Out {
	out := s.out
	s.out = nil
	if o := s.cfg.Hooks.Observer; o != nil && len(out) > 0 {
		o.Emitted(out)
	}
	return out
}

func (s *Session) toClient(frame []byte) { s.out = append(s.out, Out{To: ToClient, Frame: frame}) }
func (s *Session) toServer(frame []byte) { s.out = append(s.out, Out{To: ToServer, Frame: frame}) }

// toClientAs and toServerAs emit a peer's frame unchanged with what the
// gate read of it (m, and key, IDKey(m.ID)), so that the transport and the
// observer need not read it again.
func (s *Session) toClientAs(frame []byte, m jsonrpc.Message, key string) {
	s.out = append(s.out, Out{To: ToClient, Frame: frame, env: envelopeOf(m, key)})
}

func (s *Session) toServerAs(frame []byte, m jsonrpc.Message, key string) {
	s.out = append(s.out, Out{To: ToServer, Frame: frame, env: envelopeOf(m, key)})
}

// track adds p to the requests waiting for an answer.
func (s *Session) track(p *pendingRequest) {
	p.key = jsonrpc.IDKey(p.id)
	s.pending[p.key] = p
}

// close stops the session: every request waiting for an answer — held
// handshake, forwarded, queued — gets c's error, and nothing more is
// forwarded either way.
func (s *Session) close(c *closure) {
	if s.phase == phaseClosed {
		return
	}
	s.phase = phaseClosed
	s.closure = c
	s.pages = nil
	if s.round != nil && s.round.handshakeID != nil {
		// The held handshake result is never released.
		s.toClient(c.response(s.round.handshakeID))
	}
	s.round = nil
	for _, k := range sortedKeys(s.pending) {
		s.toClient(c.response(s.pending[k].id))
	}
	clear(s.pending)
	clear(s.own)
	clear(s.asks)
	clear(s.serverReqs)
	clear(s.holds)
	clear(s.timeouts)
	for _, frame := range s.queue {
		m, err := jsonrpc.Peek(frame)
		if err == nil && m.Kind == jsonrpc.Request {
			s.toClient(c.response(m.ID))
		}
	}
	s.queue, s.queueBytes = nil, 0
	s.held, s.heldBytes = nil, 0
}

func (s *Session) closeUnverified(reason, message string) {
	s.close(s.newClosure(CodeUnverified, message, s.errorData(reason)))
}

func (s *Session) closeHeld(err error) {
	s.log.Error("pin store unavailable: holding the session", "server", s.cfg.Identity.ID, "err", err)
	d := s.errorData(ReasonPinStore)
	msg := fmt.Sprintf("mcpseal: the pin store for server %s is missing, unreadable or tampered with; the session is held (run: mcpseal verify)", s.cfg.Identity.Label)
	s.close(s.newClosure(CodeHeld, msg, d))
}

func (s *Session) block(res pin.Result) {
	d := s.errorData(ReasonDrift)
	d.Review = "mcpseal review " + s.cfg.Identity.ID
	d.Changes, d.MoreChanges = changeRefs(res.Changes)
	if d.MoreChanges > 0 {
		d.LabelCounts = contract.LabelCounts(res.Changes)
	}
	what := "the contract"
	for _, ch := range res.Changes {
		if ch.Kind == contract.ProtocolKind {
			what = "the contract or protocol version"
		}
	}
	msg := fmt.Sprintf("mcpseal: session blocked: %s of server %s changed since it was pinned; review it with: mcpseal review %s", what, s.cfg.Identity.Label, s.cfg.Identity.ID)
	if !res.AwaitingApproval && len(res.Changes) == 0 {
		msg = fmt.Sprintf("mcpseal: session blocked: server %s shows this client profile for the first time, and new profiles wait for approval (posture strict); review it with: mcpseal review %s", s.cfg.Identity.Label, s.cfg.Identity.ID)
	}
	if res.AwaitingApproval {
		d.Reason = ReasonUnapproved
		msg = fmt.Sprintf("mcpseal: session blocked: server %s has no approved contract yet (posture strict); review it with: mcpseal review %s", s.cfg.Identity.Label, s.cfg.Identity.ID)
	}
	s.close(s.newClosure(CodeBlocked, msg, d))
}

// observe checks c against the pin store and reports drift. It returns
// whether traffic may flow.
func (s *Session) observe(profile string, c *contract.Contract, midSession bool) bool {
	// Read before the check, so that a change during it moves it again.
	gen := s.pinGeneration()
	res, err := s.cfg.Pins.Observe(s.cfg.Identity, s.obs[profile], c, s.cfg.Posture, s.cfg.Now())
	if err != nil {
		s.closeHeld(err)
		return false
	}
	switch res.Outcome {
	case pin.FirstPin, pin.Match, pin.ProfileAdded:
		s.generation = gen
		s.verified[profile] = c
		delete(s.driftPins, profile)
		if s.cfg.OnVerified != nil {
			s.cfg.OnVerified(profile, res.Outcome, c)
		}
		return true
	case pin.Drift:
		monitor := s.cfg.Posture == pin.Monitor
		outcome := "blocked"
		if monitor {
			outcome = "forwarded"
		}
		s.event(Event{Op: "drift", Outcome: outcome, Count: len(res.Changes)})
		if s.cfg.OnDrift != nil {
			s.cfg.OnDrift(DriftReport{Identity: s.cfg.Identity, Profile: profile, Result: res, Observed: c, Forwarded: monitor, MidSession: midSession})
		}
		if monitor {
			s.log.Warn("contract drift (monitor posture: forwarded anyway)", "server", s.cfg.Identity.ID, "changes", len(res.Changes))
			s.verified[profile] = c
			pinned := res.Pinned
			if pinned == nil {
				pinned = &contract.Contract{} // nothing pinned: no tool has a pinned definition
			}
			s.driftPins[profile] = pinned
			return true
		}
		s.log.Warn("contract drift: session blocked", "server", s.cfg.Identity.ID, "changes", len(res.Changes))
		s.block(res)
		return false
	case pin.Stale:
		s.log.Info("continued session's handshake is not the pinned one: ended, nothing recorded", "server", s.cfg.Identity.ID)
		msg := fmt.Sprintf("mcpseal: the continued session's handshake with server %s is not the pinned one; initialize a new session", s.cfg.Identity.Label)
		s.close(s.newClosure(CodeBlocked, msg, s.errorData(ReasonStale)))
		return false
	}
	s.closeHeld(errors.New("pin store returned an unknown outcome"))
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// pinGeneration is the pin store's generation, 0 for a store that is not
// a PinWatcher.
func (s *Session) pinGeneration() uint64 {
	if w, ok := s.cfg.Pins.(PinWatcher); ok {
		return w.Generation(s.cfg.Identity.ID)
	}
	return 0
}

// pinsMoved reports whether the shared pin state may have changed since
// the session verified against it.
func (s *Session) pinsMoved() bool {
	w, ok := s.cfg.Pins.(PinWatcher)
	return ok && w.Generation(s.cfg.Identity.ID) != s.generation
}
