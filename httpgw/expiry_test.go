package httpgw

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/internal/testoauth"
	"github.com/mcpseal/mcpseal/pin"
)

// slowCall is a 2026-07-28 call of the slow upstream's tool.
const slowCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// almostExpired mints alice's token for the docs route that the verifier
// (30 s leeway) still accepts for three to four seconds.
func (w *teamWorld) almostExpired() string {
	c := w.as.Claims(testoauth.User{Subject: "alice", Groups: []string{"eng"}, Scopes: []string{"mcp:tools"}}, "alice-app", w.url+"/docs")
	c["exp"] = time.Now().Add(-26 * time.Second).Unix()
	return w.as.Mint(c)
}

// TestLongCallStreamOutlivesTheTokenExpiry: a caller whose token is about
// to expire starts a call that runs for 10 s; the answer, or anything the
// server sends meanwhile, must not reach it after the token is no longer
// valid.
func TestLongCallStreamOutlivesTheTokenExpiry(t *testing.T) {
	t.Parallel()
	up := newSlowUpstream(t)
	up.delay = 10 * time.Second
	w := newTeamWorld(t, routedTo(t, up.route(), up.srv.Certificate(), restrictMutate{}))
	start := time.Now()
	_, b, err := w.modern(t, context.Background(), w.almostExpired(), "tools/call", "slow", slowCall)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-up.started:
	default:
		t.Fatalf("the call never reached the upstream: %.300s", b)
	}
	if el := time.Since(start); el >= 9*time.Second || !strings.Contains(string(b), `"token-expired"`) || strings.Contains(string(b), "done") {
		t.Fatalf("after %v the caller got %.300s; want the stream ended with token-expired when the token expired", el, b)
	}
}

// TestGETStreamOutlivesTheTokenExpiry: a legacy session's GET stream,
// opened with a token about to expire, is held open by keep-alives for as
// long as the client likes; it must end when the token does.
func TestGETStreamOutlivesTheTokenExpiry(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	tok := w.almostExpired()
	resp, b := w.post(t, tok, "", initBody)
	sid := resp.Header.Get(sessionHeader)
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %.200s", resp.StatusCode, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.url+"/docs", nil)
	r.Header.Set("Accept", "text/event-stream")
	r.Header.Set("Authorization", "Bearer "+tok)
	r.Header.Set(sessionHeader, sid)
	start := time.Now()
	g, err := w.httpClient().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Body.Close()
	if g.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", g.StatusCode)
	}
	_, err = io.Copy(io.Discard, g.Body)
	if el := time.Since(start); err != nil || el > 8*time.Second {
		t.Fatalf("the GET stream ran %v (%v); want it ended within about 4 s, when the token expired", el, err)
	}
}

// TestLateResultOfAnAbandonedCallWithoutItsCaller: alice's client goes
// away while her call runs in the shared session; the gate's event of the
// result that comes later must still name her.
func TestLateResultOfAnAbandonedCallWithoutItsCaller(t *testing.T) {
	t.Parallel()
	up := newSlowUpstream(t)
	var mu sync.Mutex
	var results []gate.Event
	w := newTeamWorld(t, routedTo(t, up.route(), up.srv.Certificate(), restrictMutate{}), func(c *Config) {
		c.Guard = func(string, pin.Identity, *Route) (Guard, error) {
			return Guard{Hooks: gate.Hooks{
				Result: func(gate.CallInfo, []byte) gate.Verdict { return gate.Verdict{Kind: gate.Allow} },
				Event: func(e gate.Event) {
					if e.Op == "result" {
						mu.Lock()
						results = append(results, e)
						mu.Unlock()
					}
				},
			}}, nil
		}
	})
	alice := w.token(t, "alice-app")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-up.started
		cancel() // the client goes away while the call runs
	}()
	w.modern(t, ctx, alice, "tools/call", "slow", slowCall)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := len(results)
		mu.Unlock()
		if n > 0 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 1 || results[0].Caller == nil || results[0].Caller.Subject != "alice" {
		t.Fatalf("the late result's events: %+v; want one naming alice", results)
	}
}

// TestRandomOpaqueTokensHammerTheIssuerThroughTheDoor: one client sends
// made-up opaque tokens, each new to the introspection cache. Past its
// address's budget the front door answers 503 with Retry-After, without
// asking the issuer, and not with a sign-in challenge.
func TestRandomOpaqueTokensHammerTheIssuerThroughTheDoor(t *testing.T) {
	t.Parallel()
	w := newTeamWorldAuth(t, fmt.Sprintf(`, "introspection": {"client_id": %q, "secret_env": "SECRET"}`, testoauth.IntrospectClient))
	busy := 0
	start := time.Now()
	for i := range 40 {
		resp, b := w.post(t, fmt.Sprintf("made_up_%032d", i), "", initBody)
		switch {
		case resp.StatusCode == http.StatusServiceUnavailable:
			if resp.Header.Get("Retry-After") == "" || resp.Header.Get("WWW-Authenticate") != "" || !strings.Contains(string(b), `"busy"`) {
				t.Fatalf("over budget: %v %s", resp.Header, b)
			}
			busy++
		case resp.StatusCode != http.StatusUnauthorized:
			t.Fatalf("a made-up token: %d %s", resp.StatusCode, b)
		}
	}
	// 30 at once, then one more every 2 s: a loaded machine that takes
	// seconds over the 40 requests earns the address a few more.
	refills := int(time.Since(start) / (2 * time.Second))
	if n := w.as.IntrospectionCount(); n > 31+refills || busy < 9-refills {
		t.Fatalf("%d introspections, %d refused as busy, for 40 made-up tokens from one address in %v", n, busy, time.Since(start))
	}
}

// TestRequestTimeoutCancelsTheCallAndDropsItsResult: the request timeout
// shares the expiry's way out (giveUp): the server is told to cancel the
// call, its late result is not admitted, and the answer says the call
// may have run instead of inviting a blind retry.
func TestRequestTimeoutCancelsTheCallAndDropsItsResult(t *testing.T) {
	t.Parallel()
	up := newSlowUpstream(t)
	up.delay = 4 * time.Second
	var mu sync.Mutex
	results := 0
	w := newTeamWorld(t, routedTo(t, up.route(), up.srv.Certificate(), restrictMutate{}), func(c *Config) {
		c.Limits.RequestTimeout = 2 * time.Second
		c.Guard = func(string, pin.Identity, *Route) (Guard, error) {
			return Guard{Hooks: gate.Hooks{
				Result: func(gate.CallInfo, []byte) gate.Verdict { return gate.Verdict{Kind: gate.Allow} },
				Event: func(e gate.Event) {
					if e.Op == "result" {
						mu.Lock()
						results++
						mu.Unlock()
					}
				},
			}}, nil
		}
	})
	_, b, err := w.modern(t, context.Background(), w.token(t, "alice-app"), "tools/call", "slow", slowCall)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"`+ReasonTimeout+`"`) || !strings.Contains(string(b), "may have run") {
		t.Fatalf("want the timeout answer: %.300s", b)
	}
	time.Sleep(up.delay)
	up.mu.Lock()
	cancelled := false
	for _, body := range up.bodies {
		cancelled = cancelled || strings.Contains(body, "notifications/cancelled")
	}
	up.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if !cancelled || results > 0 {
		t.Fatalf("after the timeout: cancelled=%v, %d result(s) admitted", cancelled, results)
	}
}
