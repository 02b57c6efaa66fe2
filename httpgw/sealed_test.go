package httpgw

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/oauth"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/sessionid"
)

func testKeys(t testing.TB) *sessionid.Keys {
	t.Helper()
	l, err := sessionid.NewKey("k1", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := sessionid.ParseKeys([]byte(sessionid.FileHeader + l))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// replicas are two gateways on one pin store with the same session keys,
// in front of one upstream.
type replicas struct {
	a, b *gwWorld
	up   *upstream
	// target is where the client's requests go: 0 replica A, 1 replica B.
	target atomic.Int32
	sids   atomic.Pointer[string]
}

func newReplicas(t *testing.T, keys *sessionid.Keys, routes string) *replicas {
	t.Helper()
	r := &replicas{up: newUpstream(t, false)}
	if routes == "" {
		routes = r.up.urlRoute("")
	}
	r.a = newWorld(t, routes, func(c *Config) { trust(r.up.srv)(c); c.SessionKeys = keys })
	store, err := pin.Open(r.a.home)
	if err != nil {
		t.Fatal(err)
	}
	r.b = newWorld(t, routes, func(c *Config) { trust(r.up.srv)(c); c.SessionKeys = keys; c.Pins = store })
	return r
}

// RoundTrip sends the request to the current target replica, as a load
// balancer without affinity would.
func (r *replicas) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	base := r.a.url
	if r.target.Load() == 1 {
		base = r.b.url
	}
	u, _ := url.Parse(base)
	req.URL.Host, req.Host = u.Host, u.Host
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		if sid := resp.Header.Get(sessionHeader); sid != "" {
			r.sids.Store(&sid)
		}
	}
	return resp, err
}

func (r *replicas) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: r.a.url + "/docs", HTTPClient: &http.Client{Transport: r}, MaxRetries: -1}
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func heldSessions(gw *Gateway) int {
	gw.mu.Lock()
	defer gw.mu.Unlock()
	n := 0
	for _, s := range gw.sessions {
		if s != nil {
			n++
		}
	}
	return n
}

func TestSealedSessionContinuedOnAnotherReplica(t *testing.T) {
	r := newReplicas(t, testKeys(t), "")
	cs := r.connect(t)
	sid := *r.sids.Load()
	if !sessionid.IsSealed(sid) {
		t.Fatalf("a url route's session id is not sealed: %q", sid)
	}
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	r.target.Store(1)
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("listing on replica B: %v", err)
	}
	if len(res.Tools) != 2 {
		t.Fatalf("replica B listed %d tools", len(res.Tools))
	}
	if heldSessions(r.b.gw) != 1 {
		t.Fatal("replica B does not hold the continued session")
	}
	out, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || out.IsError {
		t.Fatalf("call on replica B: %v %+v", err, out)
	}
	// Back on A: its own session still answers.
	r.target.Store(0)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "y"}}); err != nil {
		t.Fatalf("call on replica A again: %v", err)
	}
}

// TestSealedSessionIDTampered: a sealed id with one character changed is
// unknown on every replica.
func TestSealedSessionIDTampered(t *testing.T) {
	r := newReplicas(t, testKeys(t), "")
	r.connect(t)
	sid := *r.sids.Load()
	b := []byte(sid)
	b[len(b)-5] ^= 1
	for _, w := range []*gwWorld{r.a, r.b} {
		resp, body := w.do(t, req{path: "/docs", body: `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, header: map[string]string{sessionHeader: string(b)}})
		wantRefused(t, resp, body, http.StatusNotFound, CodeForbidden, ReasonSession)
	}
	if heldSessions(r.b.gw) != 0 {
		t.Fatal("a tampered id started a session")
	}
}

// TestSealedSessionIDUnderUnknownKey: replica B with other keys answers
// 404; so does a replica with no keys at all.
func TestSealedSessionIDUnderUnknownKey(t *testing.T) {
	r := newReplicas(t, testKeys(t), "")
	r.connect(t)
	sid := *r.sids.Load()
	for _, keys := range []*sessionid.Keys{testKeys(t), nil} {
		c := newWorld(t, r.up.urlRoute(""), func(c *Config) { trust(r.up.srv)(c); c.SessionKeys = keys })
		resp, body := c.do(t, req{path: "/docs", body: `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, header: map[string]string{sessionHeader: sid}})
		wantRefused(t, resp, body, http.StatusNotFound, CodeForbidden, ReasonSession)
	}
}

// sealFor seals an id for route, as a replica whose route points at
// upstreamURL would.
func sealFor(t *testing.T, keys *sessionid.Keys, route, owner string, issued time.Time, upstreamURL string) string {
	t.Helper()
	id, err := keys.Seal(sessionid.Claims{
		Local: strings.Repeat("0f", 16), Route: route, Server: sessionid.Server(upstreamURL), Protocol: "2025-11-25", ClientVersion: "2025-11-25",
		Offers: []string{"tools"}, Owner: sessionid.Owner(owner), Issued: issued.Unix(), Expires: issued.Add(sessionid.MaxAge).Unix(),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestSealedSessionStolenByAnotherCaller: under --auth the id names its
// caller; another caller presenting it on another replica gets nothing.
func TestSealedSessionStolenByAnotherCaller(t *testing.T) {
	keys := testKeys(t)
	r := newReplicas(t, keys, "")
	alice := &oauth.Identity{Issuer: "https://idp.example", Subject: "alice"}
	mallory := &oauth.Identity{Issuer: "https://idp.example", Subject: "mallory"}
	rt := r.b.gw.routes["docs"]
	sid := sealFor(t, keys, "docs", alice.Key(), time.Now(), rt.spec.URL)
	if s := r.b.gw.find(sid, rt, mallory); s != nil {
		t.Fatal("another caller continued the session")
	}
	if s := r.b.gw.find(sid, rt, nil); s != nil {
		t.Fatal("an unauthenticated caller continued the session")
	}
	if s := r.b.gw.find(sid, rt, alice); s == nil {
		t.Fatal("the caller who opened the session cannot continue it")
	}
}

// TestExpiredSealedSessionNotContinued: past sessionid.MaxAge the id opens
// nowhere new.
func TestExpiredSealedSessionNotContinued(t *testing.T) {
	keys := testKeys(t)
	r := newReplicas(t, keys, "")
	sid := sealFor(t, keys, "docs", "", time.Now().Add(-sessionid.MaxAge-time.Minute), r.b.gw.routes["docs"].spec.URL)
	resp, body := r.b.do(t, req{path: "/docs", body: `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, header: map[string]string{sessionHeader: sid}})
	wantRefused(t, resp, body, http.StatusNotFound, CodeForbidden, ReasonSession)
}

// TestSealedSessionReplayedOnAnotherRoute: an id sealed for one route is
// refused on another, and a command route never continues one.
func TestSealedSessionReplayedOnAnotherRoute(t *testing.T) {
	keys := testKeys(t)
	up := newUpstream(t, false)
	routes := `{"routes":{"docs":{"url":"https://mcp.example.com:` + up.port() + `/mcp","private":true,"name":"docs"},` +
		`"other":{"url":"https://mcp.example.com:` + up.port() + `/mcp","private":true,"name":"other"},` +
		`"cmd":{"command":["/bin/false"]}}}`
	w := newWorld(t, routes, func(c *Config) { trust(up.srv)(c); c.SessionKeys = keys })
	for _, route := range []string{"other", "cmd"} {
		sid := sealFor(t, keys, "docs", "", time.Now(), w.gw.routes["docs"].spec.URL)
		resp, body := w.do(t, req{path: "/" + route, body: `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, header: map[string]string{sessionHeader: sid}})
		wantRefused(t, resp, body, http.StatusNotFound, CodeForbidden, ReasonSession)
	}
	sid := sealFor(t, keys, "cmd", "", time.Now(), w.gw.routes["docs"].spec.URL)
	resp, body := w.do(t, req{path: "/cmd", body: `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, header: map[string]string{sessionHeader: sid}})
	wantRefused(t, resp, body, http.StatusNotFound, CodeForbidden, ReasonSession)
	if heldSessions(w.gw) != 0 {
		t.Fatal("a replayed id started a session")
	}
}

// TestContinuedSessionUpstreamGoneGets404: a replica that does not know
// the session was ended (its own record of ended ids) continues it, and
// the upstream answers that its session is over: the client gets the
// spec's 404, so it initializes again, and the slot is freed.
func TestContinuedSessionUpstreamGoneGets404(t *testing.T) {
	keys := testKeys(t)
	r := &replicas{up: newUpstream(t, false)}
	routes := r.up.urlRoute("")
	r.a = newWorld(t, routes, func(c *Config) { trust(r.up.srv)(c); c.SessionKeys = keys })
	store, err := pin.Open(r.a.home)
	if err != nil {
		t.Fatal(err)
	}
	r.b = newWorld(t, routes, func(c *Config) {
		trust(r.up.srv)(c)
		c.SessionKeys = keys
		c.Pins = store
		c.EndedSessions = &memoryEnded{m: map[string]time.Time{}}
	})
	cs := r.connect(t)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	sid := *r.sids.Load()
	h := map[string]string{sessionHeader: sid, "Mcp-Protocol-Version": "2025-11-25"}
	if resp, _ := r.a.do(t, req{method: http.MethodDelete, path: "/docs", header: h}); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	// Replica a ends the upstream's session after its 204: continue only
	// once the upstream has (else the continuation can race the DELETE and
	// meet a session that ends under its listing).
	r.up.waitDeleted(t, 1)
	resp, body := r.b.do(t, req{path: "/docs", body: `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, header: h})
	wantRefused(t, resp, body, http.StatusNotFound, CodeForbidden, ReasonSession)
	if heldSessions(r.b.gw) != 0 {
		t.Fatal("the slot of a session the upstream ended is kept")
	}
}

// TestStaleSealedSessionGets404: an id whose carried instructions are not
// the pinned ones (stale, or minted with the key) is answered 404 on the
// replica that continues it, and nothing is filed in the pin store.
func TestStaleSealedSessionGets404(t *testing.T) {
	keys := testKeys(t)
	r := newReplicas(t, keys, "")
	cs := r.connect(t)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	cl, err := keys.Open(*r.sids.Load(), "docs", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	old := "instructions of long ago"
	cl.Instructions = &old
	stale, err := keys.Seal(cl, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := r.b.do(t, req{path: "/docs", body: rtList, header: rtHeaders(stale)})
	wantRefused(t, resp, body, http.StatusNotFound, CodeForbidden, ReasonSession)
	if heldSessions(r.b.gw) != 0 {
		t.Fatal("the stale continuation keeps its slot")
	}
	store, err := pin.Open(r.a.home)
	if err != nil {
		t.Fatal(err)
	}
	list, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, sm := range list {
		if sm.DriftPending {
			t.Fatalf("a stale id filed a pending change for %s", sm.ID)
		}
	}
}
