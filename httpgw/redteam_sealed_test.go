package httpgw

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/sessionid"
)

const rtList = `{"jsonrpc":"2.0","id":77,"method":"tools/list"}`

// rtReplicasOn is newReplicas in front of a stateless or stateful upstream.
func rtReplicasOn(t *testing.T, keys *sessionid.Keys, stateless bool) *replicas {
	t.Helper()
	r := &replicas{up: newUpstream(t, stateless)}
	routes := r.up.urlRoute("")
	r.a = newWorld(t, routes, func(c *Config) { trust(r.up.srv)(c); c.SessionKeys = keys })
	store, err := pin.Open(r.a.home)
	if err != nil {
		t.Fatal(err)
	}
	r.b = newWorld(t, routes, func(c *Config) { trust(r.up.srv)(c); c.SessionKeys = keys; c.Pins = store })
	return r
}

func rtHeaders(sid string) map[string]string {
	return map[string]string{sessionHeader: sid, "Mcp-Protocol-Version": "2025-11-25"}
}

// TestAttackDeletedSealedSessionRevives: the client ends its session
// with DELETE (the spec's way to end a session; afterwards the id must
// get 404). Whoever later holds the id (a leaked log line, a proxy, the
// same client) replays it on the very replica that answered the DELETE,
// or on another replica: the gateway continues the session again, for up
// to 12 hours, because nothing remembers that the sealed id was ended.
func TestAttackDeletedSealedSessionRevives(t *testing.T) {
	r := rtReplicasOn(t, testKeys(t), true) // an upstream without its own session ids
	cs := r.connect(t)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	sid := *r.sids.Load()
	if !sessionid.IsSealed(sid) {
		t.Fatalf("not sealed: %q", sid)
	}
	resp, _ := r.a.do(t, req{method: http.MethodDelete, path: "/docs", header: rtHeaders(sid)})
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE answered %d", resp.StatusCode)
	}
	if heldSessions(r.a.gw) != 0 {
		t.Fatal("replica A still holds the deleted session")
	}
	var revived []string
	for name, w := range map[string]*gwWorld{"A (answered the DELETE)": r.a, "B": r.b} {
		resp, body := w.do(t, req{path: "/docs", body: rtList, header: rtHeaders(sid)})
		if resp.StatusCode != http.StatusNotFound {
			revived = append(revived, name+": "+resp.Status+" "+string(body))
		}
	}
	if len(revived) > 0 {
		t.Fatalf("a session ended with DELETE is continued again from its sealed id:\n%v", revived)
	}
}

// TestAttackContinuingReplicaDeletesTheUpstreamSession: a client whose
// request once landed on replica B (no affinity, as docs/fleet.md allows)
// goes on on replica A. When B lets go of its copy (idle timeout, or a
// rolling restart closing B), B sends DELETE for the upstream session it
// only took over, and the session the client is using on A is gone.
func TestAttackContinuingReplicaDeletesTheUpstreamSession(t *testing.T) {
	r := rtReplicasOn(t, testKeys(t), false)
	cs := r.connect(t)
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	r.target.Store(1)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("listing on B: %v", err)
	}
	r.target.Store(0)
	r.b.gw.Close() // B is restarted in a rolling deploy
	time.Sleep(500 * time.Millisecond)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || out.IsError {
		t.Fatalf("replica B closing its continued copy ended the session the client uses on A: %v %+v", err, out)
	}
}

// TestAttackSealedIDCarriesUpstreamSessionToAnotherServer: the id binds
// the route by its name only. Replicas (or a staging and a production
// fleet given the same key file, or the old and new routes.json of a
// rolling change) whose route "docs" points at different servers accept
// each other's ids: replica C takes the upstream session id that server 1
// issued and presents it to server 2. A hostile or merely different
// server 2 learns server 1's session id (a bearer credential for that
// session there), and the id "continues" a session that server 2 never
// opened.
func TestAttackSealedIDCarriesUpstreamSessionToAnotherServer(t *testing.T) {
	keys := testKeys(t)
	r := rtReplicasOn(t, keys, false)
	cs := r.connect(t)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	sid := *r.sids.Load()
	// The upstream session id server 1 gave: what A sealed.
	cl, err := keys.Open(sid, "docs", time.Now())
	if err != nil || cl.Upstream == "" {
		t.Fatalf("harness: %v %+v", err, cl)
	}
	other := newUpstream(t, false)
	var seen atomic.Pointer[string]
	h := other.srv.Config.Handler
	other.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if v := req.Header.Get(sessionHeader); v != "" {
			seen.Store(&v)
		}
		h.ServeHTTP(w, req)
	})
	c := newWorld(t, other.urlRoute(""), func(c *Config) { trust(other.srv)(c); c.SessionKeys = keys })
	resp, _ := c.do(t, req{path: "/docs", body: rtList, header: rtHeaders(sid)})
	deadline := time.Now().Add(3 * time.Second)
	for seen.Load() == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if p := seen.Load(); p != nil && *p == cl.Upstream {
		t.Fatalf("replica C (route docs -> another server) sent server 1's upstream session id to server 2 (answer to the client: %d)", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("an id sealed for route docs on another server was continued: %d", resp.StatusCode)
	}
}

// TestAttackIdleCopyOnOtherReplicaEndsTheSession: the no-affinity case of
// the above without any restart. One request of the session lands on
// replica B; the client's next requests all land on A again. B's copy is
// now idle, and when B's idle timeout closes it, B DELETEs the upstream
// session, so the session the client is actively using on A breaks.
func TestAttackIdleCopyOnOtherReplicaEndsTheSession(t *testing.T) {
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
		c.Limits.IdleTimeout = time.Second
	})
	// The janitor runs under Serve; the test's httptest server does not
	// start it.
	go r.b.gw.janitor()
	cs := r.connect(t)
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	r.target.Store(1)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("on B: %v", err)
	}
	r.target.Store(0)
	for i := range 12 { // the client keeps using the session on A
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		out, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		cancel()
		if err != nil || out.IsError {
			t.Fatalf("call %d on A (%v after B's one request): %v %+v; B's idle copy ended the upstream session", i, time.Duration(i)*250*time.Millisecond, err, out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestAttackResumeOfEndedUpstreamSessionNever404s: the upstream ended the
// session (its own expiry, a restart, or a DELETE from another replica).
// A client on a replica that does not hold it presents its sealed id; per
// the spec the client re-initializes only on 404. If every replica that
// does not hold the session continues it anew from the id and answers
// something else, the client is stuck for the id's 12 hours.
func TestAttackResumeOfEndedUpstreamSessionNever404s(t *testing.T) {
	keys := testKeys(t)
	r := rtReplicasOn(t, keys, false)
	cs := r.connect(t)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	sid := *r.sids.Load()
	// A ends it (as a DELETE would), which also ends the upstream session.
	resp, _ := r.a.do(t, req{method: http.MethodDelete, path: "/docs", header: rtHeaders(sid)})
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	var got []string
	for i := range 3 {
		resp, body := r.b.do(t, req{path: "/docs", body: rtList, header: rtHeaders(sid)})
		if resp.StatusCode == http.StatusNotFound {
			return
		}
		got = append(got, resp.Status+" "+string(body))
		_ = i
	}
	t.Fatalf("the upstream session is gone, yet replica B never answers 404, so the client never initializes again:\n%v", got)
}
