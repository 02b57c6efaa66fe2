package egress

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// exchange sends one frame on its own POST and delivers the answer. done
// is closed once the next frame may go: when the answer's headers are in
// for initialize (they carry the session id), when the POST is over for a
// notification or a response.
func (u *Upstream) exchange(frame []byte, m jsonrpc.Message, done chan struct{}) {
	var once bool
	release := func() {
		if !once {
			once = true
			close(done)
		}
	}
	defer release()
	ctx, cancel := context.WithTimeout(u.ctx, u.opts.RequestTimeout)
	// handed is set when an event stream's answer came and the rest of the
	// stream is left to finishBody, which then closes the body and ends
	// ctx: closing either here would cut the stream short, and the
	// connection could not be used again (a new TCP connection for every
	// request, most of the gateway's CPU per call).
	handed := false
	defer func() {
		if !handed {
			cancel()
		}
	}()
	f := Failure{Method: m.Method}
	var id []byte
	if m.Kind == jsonrpc.Request {
		id = m.ID
	}
	req, err := u.newRequest(ctx, http.MethodPost, frame)
	if err != nil {
		u.fail(id, withReason(f, ReasonUnreachable))
		return
	}
	u.setProtocolHeaders(req.Header, m)
	u.setTraceHeaders(req.Header, m)
	resp, err := u.do(req)
	if err != nil {
		u.fail(id, u.transportFailure(f, err))
		return
	}
	defer func() {
		if !handed {
			resp.Body.Close()
		}
	}()
	if m.Method == "initialize" && resp.StatusCode == http.StatusOK {
		u.mu.Lock()
		if sid := resp.Header.Get(sessionHeader); validSessionID(sid) {
			u.sessionID = sid
		}
		u.mu.Unlock()
	}
	if m.Kind != jsonrpc.Request {
		u.ack(resp, m, f)
		return
	}
	handed = u.answer(ctx, cancel, resp, m, f, release)
}

// ack checks the answer to a notification or a response: 202 (or any
// 2xx without a body) is all there is to it.
func (u *Upstream) ack(resp *http.Response, m jsonrpc.Message, f Failure) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	switch {
	case resp.StatusCode/100 == 3:
		f.Reason, f.Status = ReasonRedirect, resp.StatusCode
		u.report(f)
	case resp.StatusCode/100 != 2:
		f.Reason, f.Status = ReasonStatus, resp.StatusCode
		u.report(f)
		u.expired(resp)
	case m.Method == "notifications/initialized":
		u.startGET()
	}
}

// answer reads the answer to a request: JSON, or an event stream that
// ends with it. It reports whether the body and cancel were handed to
// finishBody.
func (u *Upstream) answer(ctx context.Context, cancel context.CancelFunc, resp *http.Response, m jsonrpc.Message, f Failure, headersIn func()) (handed bool) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode/100 == 3:
		f.Reason, f.Status = ReasonRedirect, resp.StatusCode
		u.fail(m.ID, f)
		return
	case resp.StatusCode/100 != 2:
		u.errorStatus(resp, ct, m, f)
		return
	case ct == "application/json":
		body, err := readBounded(resp.Body, u.opts.MaxMessage)
		if err != nil {
			u.fail(m.ID, u.readFailure(f, err, int64(u.opts.MaxMessage)))
			return
		}
		u.receive(body, m)
		if !u.answered(body, m.ID) {
			u.fail(m.ID, withReason(f, ReasonInvalid))
		}
	case ct == "text/event-stream":
		headersIn()
		return u.readStream(ctx, cancel, resp.Body, m, f)
	default:
		f.Reason = ReasonContentType
		u.fail(m.ID, f)
	}
	return false
}

// errorStatus handles a 4xx or 5xx answer. A JSON-RPC answer to this very
// request in the body (HeaderMismatch, UnsupportedProtocolVersion, method
// not found) is the server's answer and is delivered as it is; anything
// else becomes mcpseal's own error.
func (u *Upstream) errorStatus(resp *http.Response, ct string, m jsonrpc.Message, f Failure) {
	f.Reason, f.Status = ReasonStatus, resp.StatusCode
	if u.expired(resp) && m.Method != "initialize" {
		f.Reason = ReasonExpired
		u.fail(m.ID, f)
		return
	}
	if ct == "application/json" {
		if body, err := readBounded(resp.Body, maxErrorBody); err == nil {
			if r, err := jsonrpc.Peek(body); err == nil && r.Kind == jsonrpc.Response && r.Error != nil && jsonrpc.IDKey(r.ID) == jsonrpc.IDKey(m.ID) {
				u.report(f)
				u.deliver(body)
				return
			}
		}
	}
	u.fail(m.ID, f)
}

// expired reports whether resp says the legacy session is gone (404 to a
// request that carried a session id); the adapter then stops, and the gate
// sees the server exit.
func (u *Upstream) expired(resp *http.Response) bool {
	if resp.StatusCode != http.StatusNotFound || resp.Request.Header.Get(sessionHeader) == "" {
		return false
	}
	u.gone.Store(true)
	go u.stop(false)
	return true
}

// receive delivers one message from the upstream, and learns what the
// adapter needs from the answer to m: the negotiated version of an
// initialize, the x-mcp-header bindings of a tools/list page.
func (u *Upstream) receive(body []byte, m jsonrpc.Message) {
	r, err := jsonrpc.Peek(body)
	if err != nil {
		return
	}
	if r.Kind == jsonrpc.Response && r.Result != nil && jsonrpc.IDKey(r.ID) == jsonrpc.IDKey(m.ID) {
		switch m.Method {
		case "initialize":
			if v, ok := stringMember(r.Result, "protocolVersion"); ok && validVersion(v) {
				u.mu.Lock()
				u.version = v
				u.mu.Unlock()
			}
		case "tools/list":
			u.Bindings.Learn(r.Result)
		}
	}
	u.deliver(body)
}

// answered reports whether body is the answer to id.
func (u *Upstream) answered(body, id []byte) bool {
	r, err := jsonrpc.Peek(body)
	return err == nil && r.Kind == jsonrpc.Response && jsonrpc.IDKey(r.ID) == jsonrpc.IDKey(id)
}

// newRequest builds a request to the upstream URL from nothing.
func (u *Upstream) newRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.url.String(), r)
	if err != nil {
		return nil, err
	}
	req.Header = http.Header{}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	return req, nil
}

// do sends req after the last credential check: ambient credentials out,
// the route's own in, for its exact origin only.
func (u *Upstream) do(req *http.Request) (*http.Response, error) {
	stripHeaders(req.Header)
	if c := u.opts.Credential; c != nil {
		if req.URL.Scheme+"://"+net.JoinHostPort(req.URL.Hostname(), portOf(req.URL)) != u.origin {
			return nil, errWrongHost
		}
		req.Header.Set(c.header, c.value)
	}
	return u.client.Do(req)
}

// setProtocolHeaders sets the session and version headers and, for the
// modern protocol, Mcp-Method, Mcp-Name and Mcp-Param-*.
func (u *Upstream) setProtocolHeaders(h http.Header, m jsonrpc.Message) {
	u.mu.Lock()
	defer u.mu.Unlock()
	version := MetaVersion(m.Params)
	if version != "" {
		u.modern = version
	} else if m.Kind != jsonrpc.Request && u.version == "" {
		version = u.modern
	}
	if version == "" {
		// Legacy: the negotiated version and the session, once known.
		if u.version != "" {
			h.Set(versionHeader, u.version)
		}
		if u.sessionID != "" {
			h.Set(sessionHeader, u.sessionID)
		}
		return
	}
	h.Set(versionHeader, version)
	if version >= ModernVersion {
		SetHeaders(h, m, u.Bindings)
	}
}

// setTraceHeaders names the gate's span for a request's round trip in the
// W3C headers, when the session is traced.
func (u *Upstream) setTraceHeaders(h http.Header, m jsonrpc.Message) {
	u.mu.Lock()
	f := u.trace
	u.mu.Unlock()
	if f == nil || m.Kind != jsonrpc.Request {
		return
	}
	tp, ts := f(m.ID)
	if tp == "" {
		return
	}
	h.Set(traceparentHeader, tp)
	if ts != "" {
		h.Set(tracestateHeader, ts)
	}
}

func (u *Upstream) transportFailure(f Failure, err error) Failure {
	var ae *AddressError
	var ne net.Error
	switch {
	case errors.As(err, &ae):
		f.Reason, f.Addr, f.Class = ReasonAddress, ae.Addr.String(), ae.Class
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		f.Reason = ReasonTimeout
	default:
		f.Reason = ReasonUnreachable
	}
	return f
}

func (u *Upstream) readFailure(f Failure, err error, limit int64) Failure {
	if errors.Is(err, errTooLarge) || errors.Is(err, ErrEventTooLarge) || errors.Is(err, ErrStreamTooLarge) {
		f.Reason, f.Limit = ReasonTooLarge, limit
		return f
	}
	return u.transportFailure(f, err)
}

var errTooLarge = errors.New("egress: body over the limit")

// readBounded reads at most limit bytes, and fails beyond.
func readBounded(r io.Reader, limit int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, errTooLarge
	}
	return b, nil
}

func withReason(f Failure, reason string) Failure {
	f.Reason = reason
	return f
}

// portOf is u's port, or its scheme's default.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "http" {
		return "80"
	}
	return "443"
}

// validSessionID: visible ASCII, as the transport specification says,
// and short.
func validSessionID(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func validVersion(v string) bool {
	return len(v) == 10 && v[4] == '-' && v[7] == '-'
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only strings and ints
	}
	return b
}
