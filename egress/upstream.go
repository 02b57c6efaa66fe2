package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// An Endpoint is one upstream URL that passed the egress rule, with its
// connection pool and, for a private upstream, its pinned addresses. It
// opens any number of sessions (Open), concurrently.
type Endpoint struct {
	url    *url.URL
	origin string
	opts   Options
	client *http.Client
	dial   *dialer
}

// An Upstream is one session with a remote Streamable HTTP MCP server
// behind the egress rule, seen as a stdio.Server: the frames written to
// Stdin are sent to it, and what it answers comes out of Stdout, one frame
// per line.
type Upstream struct {
	*Endpoint
	owned bool // the Upstream owns its Endpoint (NewUpstream)
	// Bindings are the x-mcp-header bindings learned from tools/list.
	Bindings *Bindings

	inR  *io.PipeReader
	inW  *io.PipeWriter
	outR *io.PipeReader
	outW *io.PipeWriter

	ctx    context.Context
	cancel context.CancelFunc
	outMu  sync.Mutex
	wg     sync.WaitGroup // POSTs and the GET stream
	sem    chan struct{}

	mu        sync.Mutex
	sessionID string // legacy session, from the initialize answer
	version   string // legacy negotiated version
	modern    string // the last modern version seen, for notifications
	getOnce   bool   // the GET stream was started
	trace     func(id []byte) (traceparent, tracestate string)
	closing   bool

	// gone: the upstream answered 404 to a request that carried the
	// session id (the session is over there). keep: stopping lets go of
	// the legacy session without DELETE (Keep).
	gone atomic.Bool
	keep atomic.Bool

	stopOnce sync.Once
	done     chan struct{}
	err      error
}

// NewUpstream checks rawURL against the egress rule and returns one
// session with it (NewEndpoint, then Open). Nothing is sent until the
// first frame.
func NewUpstream(rawURL string, opts Options) (*Upstream, error) {
	e, err := NewEndpoint(rawURL, opts)
	if err != nil {
		return nil, err
	}
	up := e.Open()
	up.owned = true
	return up, nil
}

// NewEndpoint checks rawURL against the egress rule. A private upstream's
// name is resolved here, once, and its addresses are pinned.
func NewEndpoint(rawURL string, opts Options) (*Endpoint, error) {
	opts = opts.withDefaults()
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	host, port := u.Hostname(), portOf(u)
	d := &dialer{host: host, port: port, resolver: opts.Resolver, timeout: opts.ConnectTimeout}
	if d.resolver == nil {
		d.resolver = net.DefaultResolver
	}
	origin := u.Scheme + "://" + net.JoinHostPort(host, port)
	e := &Endpoint{url: u, origin: origin, opts: opts, dial: d}
	d.refused = func(ae *AddressError) {
		e.report(Failure{Reason: ReasonAddress, Addr: ae.Addr.String(), Class: ae.Class})
	}
	if opts.Private {
		ctx, cancel := context.WithTimeout(context.Background(), opts.ConnectTimeout)
		d.pinned, err = pinAddrs(ctx, d.resolver, host, opts.ConnectTimeout)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("private upstream %s: %w", origin, err)
		}
	} else if a, err := netip.ParseAddr(host); err == nil && Classify(a) != Public {
		return nil, fmt.Errorf("upstream %s is a %s address; allow-list it as private to reach it", origin, Classify(a))
	}
	if u.Scheme == "http" {
		if !opts.Private {
			return nil, errors.New("plain http:// is allowed only for an upstream allow-listed as private on a loopback address")
		}
		for _, a := range d.pinned {
			if Classify(a) != Loopback {
				return nil, errors.New("plain http:// is allowed only for a loopback upstream; use https://")
			}
		}
	}
	e.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil, // never from the environment
			DialContext:            d.DialContext,
			TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: opts.RootCAs},
			TLSHandshakeTimeout:    opts.ConnectTimeout,
			ResponseHeaderTimeout:  opts.HeaderTimeout,
			MaxResponseHeaderBytes: maxHeaderBytes,
			DisableCompression:     true,
			ForceAttemptHTTP2:      true,
			IdleConnTimeout:        90 * time.Second,
			MaxIdleConnsPerHost:    opts.MaxInFlight,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return e, nil
}

// Open starts a new session with the upstream.
func (e *Endpoint) Open() *Upstream {
	up := &Upstream{Endpoint: e, Bindings: NewBindings()}
	up.inR, up.inW = io.Pipe()
	up.outR, up.outW = io.Pipe()
	up.ctx, up.cancel = context.WithCancel(context.Background())
	up.sem = make(chan struct{}, e.opts.MaxInFlight)
	up.done = make(chan struct{})
	go up.loop()
	return up
}

// Resume continues a legacy session with the upstream that another
// process opened: its Mcp-Session-Id (possibly "") and negotiated
// version are sent with every request, and no initialize is expected.
// The upstream's GET stream is opened at once.
func (e *Endpoint) Resume(sessionID, version string) *Upstream {
	up := e.Open()
	up.mu.Lock()
	if validSessionID(sessionID) {
		up.sessionID = sessionID
	}
	if validVersion(version) {
		up.version = version
	}
	up.mu.Unlock()
	up.startGET()
	return up
}

// Session returns the upstream's legacy session id ("" when it gave
// none) and the negotiated version.
func (u *Upstream) Session() (id, version string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.sessionID, u.version
}

// Origin is the upstream's scheme://host:port.
func (e *Endpoint) Origin() string { return e.origin }

// Close drops the endpoint's idle connections.
func (e *Endpoint) Close() { e.client.CloseIdleConnections() }

// ParseURL accepts an upstream URL: absolute http or https, a host, no
// user information and no fragment.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("the upstream URL does not parse")
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, errors.New("the upstream URL must start with https://")
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return nil, errors.New("the upstream URL has no host")
	case u.User != nil:
		return nil, errors.New("the upstream URL must not carry user information; use a credential")
	case u.Fragment != "" || u.RawFragment != "":
		return nil, errors.New("the upstream URL must not have a fragment")
	}
	return u, nil
}

// SetTrace makes every request this session forwards carry the W3C
// traceparent and tracestate headers f returns for its id (none when f
// returns ""): the gate's span for the round trip, so the server's spans
// continue the trace under mcpseal's. The body is sent unchanged.
func (u *Upstream) SetTrace(f func(id []byte) (traceparent, tracestate string)) {
	u.mu.Lock()
	u.trace = f
	u.mu.Unlock()
}

// Stdin receives the frames for the upstream.
func (u *Upstream) Stdin() io.WriteCloser { return u.inW }

// Stdout yields the upstream's frames.
func (u *Upstream) Stdout() io.Reader { return u.outR }

// Stderr is nil: failures go to Options.OnFailure and the logger.
func (u *Upstream) Stderr() io.Reader { return nil }

// Wait blocks until the upstream adapter has stopped.
func (u *Upstream) Wait() error {
	<-u.done
	return u.err
}

// Gone reports whether the upstream said the legacy session is over (404
// to a request that carried its id).
func (u *Upstream) Gone() bool { return u.gone.Load() }

// Keep sets whether stopping lets go of the legacy session without ending
// it upstream (no DELETE): a session whose id is sealed may go on through
// another replica, so only its client ends it (docs/fleet.md).
func (u *Upstream) Keep(keep bool) { u.keep.Store(keep) }

// Terminate ends the session politely: DELETE, then stop.
func (u *Upstream) Terminate() { go u.stop(true) }

// Kill stops at once.
func (u *Upstream) Kill() { u.stop(false) }

// loop sends every frame written to Stdin. Notifications, responses and
// initialize are sent in order, each answered before the next frame;
// other requests go out concurrently, each on its own POST.
func (u *Upstream) loop() {
	r := jsonrpc.NewReader(u.inR, u.opts.MaxMessage)
	for {
		frame, err := r.Next()
		if errors.Is(err, jsonrpc.ErrFrameTooLarge) {
			continue
		}
		if err != nil {
			u.stop(true)
			return
		}
		m, err := jsonrpc.Peek(frame)
		if err != nil || m.Kind == jsonrpc.Batch {
			continue // the gate never sends these
		}
		select {
		case u.sem <- struct{}{}:
		case <-u.ctx.Done():
			continue
		}
		u.wg.Add(1)
		ordered := m.Kind != jsonrpc.Request || m.Method == "initialize"
		done := make(chan struct{})
		go func() {
			defer u.wg.Done()
			defer func() { <-u.sem }()
			u.exchange(frame, m, done)
		}()
		if ordered {
			select {
			case <-done:
			case <-u.ctx.Done():
			}
		}
	}
}

// stop ends the adapter; polite sends DELETE for a legacy session first.
func (u *Upstream) stop(polite bool) {
	u.stopOnce.Do(func() {
		u.mu.Lock()
		u.closing = true
		sid, version := u.sessionID, u.version
		u.mu.Unlock()
		if polite && sid != "" && !u.keep.Load() {
			u.deleteSession(sid, version)
		}
		u.cancel()
		u.inR.CloseWithError(io.ErrClosedPipe)
		go func() {
			u.wg.Wait()
			u.outMu.Lock()
			u.outW.Close()
			u.outMu.Unlock()
			if u.owned {
				u.client.CloseIdleConnections()
			}
			close(u.done)
		}()
	})
}

func (u *Upstream) deleteSession(sid, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), u.opts.ConnectTimeout)
	defer cancel()
	req, err := u.newRequest(ctx, http.MethodDelete, nil)
	if err != nil {
		return
	}
	req.Header.Set(sessionHeader, sid)
	if version != "" {
		req.Header.Set(versionHeader, version)
	}
	if resp, err := u.do(req); err == nil {
		resp.Body.Close()
	}
}

// deliver writes one frame from the upstream to Stdout. Line breaks in a
// frame can only be JSON whitespace (a JSON string cannot hold one raw),
// so they become spaces: one message stays one line.
func (u *Upstream) deliver(frame []byte) {
	if bytes.ContainsAny(frame, "\r\n") {
		frame = bytes.Map(func(r rune) rune {
			if r == '\r' || r == '\n' {
				return ' '
			}
			return r
		}, frame)
	}
	u.outMu.Lock()
	defer u.outMu.Unlock()
	line := append(append(make([]byte, 0, len(frame)+1), frame...), '\n')
	_, _ = u.outW.Write(line)
}

// fail answers the request id with an upstream error, and reports f.
func (u *Upstream) fail(id []byte, f Failure) {
	u.report(f)
	if id == nil {
		return
	}
	d := ErrorData{Reason: f.Reason, Server: u.opts.Server, Status: f.Status}
	u.deliver(jsonrpc.NewError(id, CodeUpstream, failureMessage(f), marshal(d)))
}

func (e *Endpoint) report(f Failure) {
	f.Origin = e.origin
	e.opts.Logger.Warn("upstream failure", "reason", f.Reason, "origin", f.Origin, "method", f.Method, "status", f.Status, "addr", f.Addr)
	if e.opts.OnFailure != nil {
		e.opts.OnFailure(f)
	}
}

// failureMessage is mcpseal's own text for f: never the upstream's.
func failureMessage(f Failure) string {
	switch f.Reason {
	case ReasonAddress:
		return "mcpseal: refused to connect to the upstream: its address is " + string(f.Class) + ", not public"
	case ReasonRedirect:
		return fmt.Sprintf("mcpseal: the upstream answered with a redirect (HTTP %d); redirects are not followed", f.Status)
	case ReasonTimeout:
		return "mcpseal: the upstream did not answer in time"
	case ReasonTooLarge:
		return fmt.Sprintf("mcpseal: the upstream's answer passed the %d-byte limit", f.Limit)
	case ReasonContentType:
		return "mcpseal: the upstream answered with a content type that is neither JSON nor an event stream"
	case ReasonStatus:
		return fmt.Sprintf("mcpseal: the upstream answered HTTP %d", f.Status)
	case ReasonInvalid:
		return "mcpseal: the upstream answered with something that is not a JSON-RPC message"
	case ReasonExpired:
		return "mcpseal: the upstream ended the session"
	}
	return "mcpseal: cannot reach the upstream"
}
