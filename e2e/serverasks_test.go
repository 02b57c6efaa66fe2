package e2e

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/internal/testmcp"
)

// TestLookAlikeConfirmationNotShown: a server sends, under ids of its own,
// an elicitation/create whose text is the gate's own confirmation question
// (known gaps 4 and 26). In a legacy session it is refused as a look-alike
// while a question that does not name mcpseal still reaches the client;
// in a 2026-07-28 session, whose protocol has no server requests, neither
// reaches it.
func TestLookAlikeConfirmationNotShown(t *testing.T) {
	t.Parallel()
	const lookAlike = "mcpseal: allow tool danger of server x (0011223344556677) to run once? LOOKALIKE"
	for _, gen := range generations {
		for _, tc := range []struct {
			message string
			shown   bool // in a legacy session
		}{
			{lookAlike, false},
			{spoofMarker, true},
		} {
			t.Run(gen.name+"/"+strings.Fields(tc.message)[0], func(t *testing.T) {
				t.Parallel()
				w := newWorld(t)
				sc := confirmScenario(w, &testmcp.Spoof{AfterListing: 1, Count: 2, Message: tc.message, OwnIDs: true})
				p := startScenario(t, w.home, []string{"--name", "lookalike", "--policy", writePolicy(t, confirmPolicy)}, sc)
				confirmHandshake(t, p, gen.modern)
				time.Sleep(300 * time.Millisecond)
				if _, err := p.CallTool("echo", map[string]any{}); err != nil {
					t.Fatalf("tools/call echo: %v", err)
				}
				shown := 0
				for _, m := range p.Inbox() {
					if m.Method == "elicitation/create" && strings.Contains(string(m.Params), tc.message) {
						shown++
					}
				}
				want := 0
				if tc.shown && !gen.modern {
					want = 2
				}
				if shown != want {
					t.Errorf("the client was shown %d of the server's own questions %q, want %d", shown, tc.message, want)
				}
				p.Close()
			})
		}
	}
}

// TestGoSDKClientConfirmsThroughInputRequired: the official Go SDK client
// in a 2026-07-28 session (its default), with an elicitation handler,
// calls a destructive tool through mcpseal run under confirm_destructive.
// The gate asks in an input_required answer; the SDK's multi round-trip
// support shows the question to the handler and sends the call again.
// A decline never reaches the server; a yes does, once.
func TestGoSDKClientConfirmsThroughInputRequired(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var mu sync.Mutex
	var asked []string
	answer := &mcp.ElicitResult{Action: "decline"}
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.Params.Message)
		return answer, nil
	}}
	argv := append([]string{bin.mcpseal, "run", "--name", "sdk-mrtr", "--policy", writePolicy(t, confirmPolicy), "--"}, bin.testserver, scenarioFile(t, confirmScenario(w, nil)))
	s, err := connectSDKWith(t, environ(t, w.home), "", opts, argv...)
	if err != nil {
		t.Fatal(err)
	}
	if v := s.cs.InitializeResult(); v == nil || v.ProtocolVersion != testmcp.ModernVersion {
		t.Fatalf("the session is not 2026-07-28: %+v", v)
	}
	call := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "danger", Arguments: map[string]any{}})
		if err == nil && res.NeedsInput() {
			return errors.New("the SDK returned the input_required answer itself")
		}
		return err
	}
	if err := call(); err == nil {
		t.Error("a declined destructive call went through")
	} else {
		wantSDKError(t, err, -32012)
	}
	if n := w.count(1, "tools/call"); n != 0 {
		t.Errorf("the declined call reached the server (%d tools/call)", n)
	}
	mu.Lock()
	answer = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
	mu.Unlock()
	if err := call(); err != nil {
		t.Errorf("an explicit yes was refused: %v", err)
	}
	if n := w.count(1, "tools/call"); n != 1 {
		t.Errorf("%d tools/call reached the server, want the confirmed one", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || !strings.HasPrefix(asked[0], "mcpseal: allow tool danger") {
		t.Errorf("the person was asked %q", asked)
	}
}

// TestGatewayGoSDKClientConfirmsThroughInputRequired: the same through
// mcpseal gateway's shared 2026-07-28 session (a command route), where
// the gate cannot send a request to one client among many: the question
// goes in the call's answer to the caller who made it.
func TestGatewayGoSDKClientConfirmsThroughInputRequired(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	file := filepath.Join(t.TempDir(), "scenario.json")
	writeScenario(t, file, confirmScenario(w, nil))
	var mu sync.Mutex
	asked := 0
	answer := &mcp.ElicitResult{Action: "decline"}
	opts := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked++
		return answer, nil
	}}
	g := startGateway(t, w.home, scenarioRoute(file, "gw-mrtr", ""), "--policy", writePolicy(t, confirmPolicy))
	cs, err := g.connectWith("", opts)
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult(); v == nil || v.ProtocolVersion != testmcp.ModernVersion {
		t.Fatalf("the session is not 2026-07-28: %+v", v)
	}
	call := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "danger", Arguments: map[string]any{}})
		return err
	}
	if err := call(); err == nil {
		t.Error("a declined destructive call went through")
	} else {
		wantSDKError(t, err, -32012)
	}
	if n := w.count(0, "tools/call"); n != 0 {
		t.Errorf("the declined call reached the server (%d tools/call)", n)
	}
	mu.Lock()
	answer = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
	mu.Unlock()
	if err := call(); err != nil {
		t.Errorf("an explicit yes was refused: %v", err)
	}
	if n := w.count(0, "tools/call"); n != 1 {
		t.Errorf("%d tools/call reached the server, want the confirmed one", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 2 {
		t.Errorf("the person was asked %d times, want 2", asked)
	}
}
