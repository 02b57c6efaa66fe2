package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/mcpseal/mcpseal/internal/testmcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Under the monitor posture a drift in the listings is forwarded, but the
// host's call decisions still need a definition to judge. These are the
// ways a server tried to have a tool called with nobody judging it.

// TestUnlistedToolUnderMonitorIsRefused: a tool the session's verified
// contract does not have, and that is not the same profile's pinned tool
// the server stopped listing, is refused under monitor as under guard
// (-32006) and never reaches the server. The server lists a subset of its
// pin to a new client profile (one more capability), so the subset is
// pinned for that profile without a drift; or a team lock under monitor
// approved a tool the server no longer lists. Before, both were forwarded
// with no hook at all: no policy, no schema check, no confirmation.
func TestUnlistedToolUnderMonitorIsRefused(t *testing.T) {
	t.Parallel()
	onlyEcho := []testmcp.Variant{{FromSession: 2, Tools: []testmcp.RawJSON{
		testmcp.RawJSON(`{"name":"echo","description":"Repeats text.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`),
	}}}
	refused := func(t *testing.T, p *proxy, w *world, session int) {
		t.Helper()
		asked := 0
		p.Elicit = func(json.RawMessage) string { asked++; return `{"action":"accept","content":{"confirm":true}}` }
		if tools, err := p.ListTools(); err != nil || len(tools) != 1 {
			t.Fatalf("tools/list: %d tools, %v (want only echo)", len(tools), err)
		}
		_, err := p.CallTool("danger", map[string]any{})
		if err == nil {
			t.Fatal("the unlisted destructive tool was called")
		}
		if code, reason := rpcCode(t, err); code != -32006 || reason != "unknown-tool" {
			t.Errorf("code %d reason %q, want -32006 unknown-tool", code, reason)
		}
		if asked != 0 {
			t.Errorf("asked %d times: a tool with no definition is refused, not put to the person", asked)
		}
		wantExit(t, "monitor session", p.Close(), exitOK)
		if n := w.count(session, "tools/call"); n != 0 {
			t.Errorf("%d tools/call of the unlisted tool reached the server", n)
		}
	}
	for _, gen := range generations {
		t.Run("new-profile/"+gen.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			sc := confirmScenario(w, nil)
			sc.Variants = onlyEcho
			p, _ := monitorAfterPin(t, w, sc, "subset", gen.modern, map[string]any{"elicitation": map[string]any{}, "roots": map[string]any{}})
			refused(t, p, w, 2)
		})
	}
	t.Run("lock", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		sc := confirmScenario(w, nil)
		sc.Variants = onlyEcho
		file := scenarioFile(t, sc)
		r := newLockRepo(t)
		r.setServer("delist", bin.testserver, file)
		r.wantLock(exitOK, "--approve", "--yes") // session 1: the lock approves echo and danger
		r.lockedDigest("delist", "danger")
		p := startProxy(t, r.home, []string{"--name", "delist", "--lock", r.lockPath, "--policy", writePolicy(t, confirmPolicy), "--posture", "monitor"}, bin.testserver, file)
		if _, err := p.Initialize(legacyVersion, map[string]any{"elicitation": map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		refused(t, p, w, 2)
	})
}

// TestLockMonitorAsksNothingOfAnUnchangedApprovedTool: the lock's approved
// definitions only add caution where the server's differ; an approved,
// unchanged read-only tool is not put to the person under --lock --posture
// monitor, in either generation.
func TestLockMonitorAsksNothingOfAnUnchangedApprovedTool(t *testing.T) {
	t.Parallel()
	r := newLockRepo(t)
	r.setServer("tools", bin.sdkserver, r.defsPath)
	r.wantLock(exitOK, "--approve", "--yes")
	for _, gen := range []string{legacyVersion, testmcp.ModernVersion} {
		p := startProxy(t, r.home, []string{"--name", "tools", "--lock", r.lockPath, "--policy", writePolicy(t, confirmPolicy), "--posture", "monitor"}, bin.sdkserver, r.defsPath)
		asked := 0
		p.Elicit = func(json.RawMessage) string { asked++; return `{"action":"decline"}` }
		var err error
		caps := map[string]any{"elicitation": map[string]any{}}
		if gen == legacyVersion {
			_, err = p.Initialize(gen, caps)
		} else {
			_, err = p.Discover(gen, caps)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.CallTool("add", map[string]any{"a": 1, "b": 2}); err != nil || asked != 0 {
			t.Errorf("%s: approved, unchanged, read-only add: asked %d times, err %v", gen, asked, err)
		}
		wantExit(t, gen, p.Close(), exitOK)
	}
}

// TestGatewayRoutePostureGovernsItsLock: a route's own "posture" is the
// one its lock enforces under, whatever the gateway's --posture. A guard
// route under a monitor gateway withholds and refuses the rug-pulled
// (unapproved) tool; a monitor route under a guard gateway withholds
// nothing. Before, the lock took the gateway's posture while the route's
// gate took the route's: a guard route's lock enforced nothing.
func TestGatewayRoutePostureGovernsItsLock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		route   string
		gateway []string
		listed  []string
		callAdd bool
	}{
		{route: "guard", gateway: []string{"--posture", "monitor"}, listed: []string{"echo"}},
		{route: "guard", listed: []string{"echo"}},
		{route: "monitor", listed: []string{"add", "echo"}, callAdd: true},
	} {
		t.Run(tc.route+"-route/"+map[bool]string{true: "monitor", false: "guard"}[len(tc.gateway) > 0]+"-gateway", func(t *testing.T) {
			t.Parallel()
			r := newLockRepo(t)
			r.setServer("tools", bin.sdkserver, r.defsPath)
			r.wantLock(exitOK, "--approve", "--yes")
			r.rugPull()
			routes, _ := json.Marshal(map[string]any{"routes": map[string]any{"sdk": map[string]any{
				"command": []string{bin.sdkserver, r.defsPath}, "name": "tools", "lock": r.lockPath, "posture": tc.route}}})
			g := startGateway(t, r.home, string(routes), tc.gateway...)
			cs, err := g.connect("sdk", "2025-11-25")
			if err != nil {
				t.Fatal(err)
			}
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, tc.listed) {
				t.Errorf("listed %v, want %v", names, tc.listed)
			}
			out, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
			if called := err == nil && !out.IsError; called != tc.callAdd {
				t.Errorf("the rug-pulled add: called %v (err %v), want %v", called, err, tc.callAdd)
			}
		})
	}
}

// TestTaskResultCannotBypassResultChecks: a client asks for a tool to run
// as a task (2025-11-25 "task"), whose result would come later on
// tasks/result, past the result checks (result_bytes, the pinned
// outputSchema). Through mcpseal both are refused with -32005
// task-unsupported, under every posture, and neither reaches the server.
//
// A server that answers a plain call with a task handle (the 2026-07-28
// tasks extension's "resultType": "task"), to deliver the result later by
// tasks/get, has the handle withheld.
func TestTaskResultCannotBypassResultChecks(t *testing.T) {
	t.Parallel()
	for _, posture := range []string{"guard", "monitor"} {
		t.Run(posture, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			sc := confirmScenario(w, nil)
			p := startScenario(t, w.home, []string{"--name", "tasks", "--posture", posture}, sc)
			handshake(t, p, false, map[string]any{})
			if _, err := p.ListTools(); err != nil {
				t.Fatal(err)
			}
			for i, frame := range []string{
				`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{},"task":{"ttl":60000}}}`,
				`{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":"t1"}}`,
				`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":"t1"}}`,
			} {
				id := 900 + i
				if err := p.Send(fmt.Appendf(nil, frame, id)); err != nil {
					t.Fatal(err)
				}
				m, err := p.Await([]byte(fmt.Sprint(id)))
				if err != nil {
					t.Fatalf("no answer to %s: %v", frame, err)
				}
				var data struct {
					Reason string `json:"reason"`
				}
				if m.Error != nil {
					_ = json.Unmarshal(m.Error.Data, &data)
				}
				if m.Error == nil || m.Error.Code != -32005 || data.Reason != "task-unsupported" {
					t.Errorf("%s: answered %.300s, want -32005 task-unsupported", frame, m.Raw)
				}
			}
			wantExit(t, "session", p.Close(), exitOK)
			if n, r, g := w.count(1, "tools/call"), w.count(1, "tasks/result"), w.count(1, "tasks/get"); n != 0 || r != 0 || g != 0 {
				t.Errorf("%d tools/call, %d tasks/result and %d tasks/get reached the server", n, r, g)
			}
		})
	}
	for _, gen := range generations {
		t.Run("handle/"+gen.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			sc := confirmScenario(w, nil)
			sc.CallResult = testmcp.RawJSON(`{"resultType":"task","taskId":"t1","status":"working","createdAt":"2026-12-02T00:00:00Z","ttlMs":60000}`)
			p := startScenario(t, w.home, []string{"--name", "task-handle"}, sc)
			handshake(t, p, gen.modern, map[string]any{})
			_, err := p.CallTool("echo", map[string]any{})
			if err == nil {
				t.Fatal("a task handle was delivered as the call's result")
			}
			if code, reason := rpcCode(t, err); code != -32005 || reason != "task-unsupported" {
				t.Errorf("code %d reason %q, want -32005 task-unsupported", code, reason)
			}
			wantExit(t, "session", p.Close(), exitOK)
		})
	}
}
