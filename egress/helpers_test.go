package egress

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// publicIP is the fake public address test names resolve to; the dialer
// translates it to the httptest server's loopback address after the
// egress check has approved it.
var publicIP = netip.MustParseAddr("203.0.113.10")

// fakeResolver answers lookups from a script: the i-th lookup gets
// answers[i], the last answer repeating.
type fakeResolver struct {
	mu      sync.Mutex
	answers [][]netip.Addr
	calls   int
}

func resolveTo(answers ...string) *fakeResolver {
	r := &fakeResolver{}
	for _, a := range answers {
		r.answers = append(r.answers, []netip.Addr{netip.MustParseAddr(a)})
	}
	return r
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, _ string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := min(r.calls, len(r.answers)-1)
	r.calls++
	return r.answers[i], nil
}

func (r *fakeResolver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// upstreamTo returns an Upstream for https://mcp.example.com/mcp that
// reaches srv through the fake public address.
func upstreamTo(t *testing.T, srv *httptest.Server, r Resolver, opts Options) (*Upstream, *failures) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	opts.RootCAs, opts.Resolver = pool, r
	fs := &failures{}
	opts.OnFailure = fs.add
	up, err := NewUpstream("https://mcp.example.com/mcp", opts)
	if err != nil {
		t.Fatal(err)
	}
	real := netip.MustParseAddrPort(srv.Listener.Addr().String())
	up.Endpoint.dial.translate = func(ap netip.AddrPort) netip.AddrPort {
		if ap.Addr() == publicIP {
			return real
		}
		return ap
	}
	t.Cleanup(func() {
		up.Kill()
		if err := waitDone(up); err != nil {
			t.Error(err)
		}
	})
	return up, fs
}

func waitDone(up *Upstream) error {
	select {
	case <-up.done:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("upstream did not stop within 10s")
	}
}

type failures struct {
	mu   sync.Mutex
	list []Failure
}

func (f *failures) add(x Failure) {
	f.mu.Lock()
	f.list = append(f.list, x)
	f.mu.Unlock()
}

func (f *failures) has(reason string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range f.list {
		if x.Reason == reason {
			return true
		}
	}
	return false
}

// peer is the gate's side of an Upstream: it writes frames and reads
// what comes back.
type peer struct {
	t      *testing.T
	up     *Upstream
	frames chan []byte
}

func newPeer(t *testing.T, up *Upstream) *peer {
	p := &peer{t: t, up: up, frames: make(chan []byte, 64)}
	go func() {
		r := jsonrpc.NewReader(up.Stdout(), 64<<20)
		for {
			f, err := r.Next()
			if err != nil {
				close(p.frames)
				return
			}
			p.frames <- append([]byte(nil), f...)
		}
	}()
	return p
}

func (p *peer) send(frame string) {
	p.t.Helper()
	if _, err := p.up.Stdin().Write([]byte(frame + "\n")); err != nil {
		p.t.Fatal(err)
	}
}

// next returns the next frame from the upstream.
func (p *peer) next() []byte {
	p.t.Helper()
	select {
	case f, ok := <-p.frames:
		if !ok {
			p.t.Fatal("upstream closed its output")
		}
		return f
	case <-time.After(15 * time.Second):
		p.t.Fatal("no frame from the upstream within 15s")
	}
	return nil
}

// answer returns the next response frame, skipping notifications.
func (p *peer) answer() jsonrpc.Message {
	p.t.Helper()
	for {
		f := p.next()
		m, err := jsonrpc.Peek(f)
		if err != nil {
			p.t.Fatalf("invalid frame %s: %v", f, err)
		}
		if m.Kind == jsonrpc.Response {
			return m
		}
	}
}

// wantUpstreamError checks that m is mcpseal's upstream error with reason.
func wantUpstreamError(t *testing.T, m jsonrpc.Message, reason string) string {
	t.Helper()
	var e struct {
		Code    int       `json:"code"`
		Message string    `json:"message"`
		Data    ErrorData `json:"data"`
	}
	if m.Error == nil || json.Unmarshal(m.Error, &e) != nil {
		t.Fatalf("got %s %s, want an error", m.Result, m.Error)
	}
	if e.Code != CodeUpstream || e.Data.Reason != reason {
		t.Fatalf("got error %d %q reason %q, want %d reason %q", e.Code, e.Message, e.Data.Reason, CodeUpstream, reason)
	}
	return e.Message
}

// jsonResult answers every POSTed request with an empty result, and every
// notification with 202.
func jsonResult(w http.ResponseWriter, r *http.Request) {
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.NewDecoder(r.Body).Decode(&msg)
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{}}`))
}
