package httpgw

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/oauth"
)

// recordBodies wraps the world's upstream to keep every request body it
// receives (set before the first request reaches it).
func recordBodies(w *teamWorld) func() []string {
	var mu sync.Mutex
	var bodies []string
	next := w.up.srv.Config.Handler
	w.up.srv.Config.Handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		next.ServeHTTP(rw, r)
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(bodies)
	}
}

// bob (group ops) may neither see nor call mutate. As a request his call
// is answered "no such tool"; as a JSON-RPC notification (no id) the
// front door's identityCall skips it (it checks requests only) and the
// gate forwards every client notification of an open session as it is,
// so the upstream receives bob's tools/call of mutate. A JSON-RPC 2.0
// server runs a notification and only withholds the answer; a server that
// dispatches by method alone runs the hidden tool for bob. The same
// bypasses the host policy's deny, schema, confirmation and rate limits.
func TestToolsCallNotificationOfAHiddenToolReachesTheUpstream(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	bodies := recordBodies(w)
	bob := w.token(t, "bob-app")
	resp, _ := w.post(t, bob, "", initBody)
	sid := resp.Header.Get(sessionHeader)
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("bob's initialize: %d", resp.StatusCode)
	}
	w.post(t, bob, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// Wait for the gate's own verification to end (a listing round).
	w.post(t, bob, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	resp, _ = w.post(t, bob, sid, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"mutate","arguments":{"text":"x"}}}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Logf("the notification was answered %d", resp.StatusCode)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		for _, b := range bodies() {
			if strings.Contains(b, `"tools/call"`) && strings.Contains(b, `"mutate"`) {
				time.Sleep(200 * time.Millisecond)
				w.up.mu.Lock()
				ran := w.up.mutated
				w.up.mu.Unlock()
				t.Fatalf("the upstream received bob's call of a tool he may not call (go-sdk ran it: %v): %s", ran, b)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// MaxSessions bounds the legacy sessions of every caller together: one
// authenticated caller with the lowest privileges opens them all (each
// starts an upstream connection or a server process) and every other
// identity is refused with 503 until they idle out (30 minutes).
func TestOneCallerTakesEverySessionSlot(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t, func(c *Config) { c.Limits.MaxSessions = 3 })
	bob, alice := w.token(t, "bob-app"), w.token(t, "alice-app")
	opened := 0
	for range 3 {
		if resp, _ := w.post(t, bob, "", initBody); resp.StatusCode == http.StatusOK {
			opened++
		}
	}
	if opened == 0 || opened == 3 {
		t.Fatalf("bob opened %d of the 3 sessions; want some, not all", opened)
	}
	if resp, _ := w.post(t, alice, "", initBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("alice cannot open a session after bob opened %d: %d", opened, resp.StatusCode)
	}
}

// restrictMutate is the policy file's usual shape: one tool is restricted
// to a subject class (eng), every other name is open.
type restrictMutate struct{}

func (restrictMutate) Visible(route string, who *oauth.Identity, tool string) bool {
	return tool != "mutate" || slices.Contains(who.Groups, "eng")
}
func (restrictMutate) Call(string, *oauth.Identity, string) string { return "" }

// slowUpstream is a stateless go-sdk server with one tool, slow, that
// runs for delay (3 s unless changed before the first call); it keeps
// every request body it receives.
type slowUpstream struct {
	delay   time.Duration
	srv     *httptest.Server
	started chan struct{}
	mu      sync.Mutex
	bodies  []string
}

func newSlowUpstream(t *testing.T) *slowUpstream {
	u := &slowUpstream{started: make(chan struct{}, 16), delay: 3 * time.Second}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "slow", Description: "Takes a while.", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			u.started <- struct{}{}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(u.delay):
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			}
		})
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true, DisableLocalhostProtection: true})
	u.srv = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies = append(u.bodies, string(b))
		u.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// The 2026-07-28 session of a route is shared by every caller; the
// gateway maps a modern client's notifications/cancelled to "the one
// request in flight with that id" among all callers' requests. bob, who
// may not even call the tool, cancels alice's call by naming her request
// id (go-sdk ids are small integers: he tries 1 to 20).
func TestCancelOfAnotherCallersRequestInTheSharedSession(t *testing.T) {
	t.Parallel()
	up := newSlowUpstream(t)
	w := newTeamWorld(t, routedTo(t, up.route(), up.srv.Certificate(), restrictMutate{}))
	bob := w.token(t, "bob-app")
	alice, err := w.connectAs("alice-app", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	done := make(chan error, 1)
	go func() {
		_, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
		done <- err
	}()
	select {
	case <-up.started:
	case <-time.After(10 * time.Second):
		t.Fatal("alice's call never reached the upstream")
	}
	for id := 1; id <= 20; id++ {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, id)
		if _, _, err := w.modern(t, context.Background(), bob, "notifications/cancelled", "", body); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	up.mu.Lock()
	defer up.mu.Unlock()
	for _, b := range up.bodies {
		if strings.Contains(b, "notifications/cancelled") {
			t.Fatalf("bob's cancel was mapped to alice's request and sent upstream: %s", b)
		}
	}
	<-done
}

// The 2026-07-28 session of a route is one gate for every caller, and
// that gate verifies at most MaxProfiles (16) client profiles (protocol
// version + capability names, which the request's _meta chooses). bob
// sends 16 requests naming made-up capabilities; from then on every
// other caller whose profile is new is refused ("too many client
// profiles in one session") until the gateway restarts. (A dual-era
// client such as the go-sdk's falls back to a legacy session; a
// 2026-07-28-only client is locked out.) Each made-up profile is also a
// verification round upstream and, when new, a pin.
func TestOneCallerFillsTheSharedSessionsProfiles(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	w := newTeamWorld(t, routedTo(t, up.urlRoute(""), up.srv.Certificate(), nil))
	bob, alice := w.token(t, "bob-app"), w.token(t, "alice-app")
	for i := range 16 {
		w.listModern(t, bob, i+1, fmt.Sprintf(`{"x%d":{}}`, i))
	}
	if got := w.listModern(t, alice, 1, `{"roots":{}}`); !strings.Contains(got, `"tools"`) {
		t.Fatalf("after bob's made-up profiles alice's 2026-07-28 listing is refused: %.300s", got)
	}
}
