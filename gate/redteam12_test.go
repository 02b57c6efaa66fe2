package gate_test

import (
	"strings"

	"github.com/mcpseal/mcpseal/pin"
	"testing"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// TestKeptPageAnswerPanicInReplayLeavesListingUnanswered: a client's
// listing queued during verification is replayed by release() and now
// answered from the kept pages inside the server's step (the frame being
// handled is the gate's own listing page). The request is out of the
// replay queue and, once serverResponse has forgotten it, out of pending
// too; when a host hook (Shape, or the Event sink at "list") panics while
// the kept page is being delivered, Fail finds no trace of it: the client
// waits for an answer forever. Before pages.go the replayed listing was at
// the server (pending), so Fail answered it.
func TestKeptPageAnswerPanicInReplayLeavesListingUnanswered(t *testing.T) {
	t.Parallel()
	hooks := gate.Hooks{Shape: func(string, contract.Kind, []contract.Definition) []gate.Shape {
		panic("shape hook bug")
	}}
	srv := newFakeServer(toolWeather)
	srv.manual["tools/list"] = true
	h, _ := hookHarness(t, hooks, srv)
	h.client(initLegacy)
	h.client(listTools) // queued until the contract verifies
	if len(srv.pendingManual) != 1 {
		t.Fatalf("gate's own listing: %v", srv.pendingManual)
	}
	own := srv.pendingManual[0]
	res := jsonrpc.NewResult(own.ID, []byte(`{"tools":[`+toolWeather+`]}`))
	outs, panicked := step(h, gate.ToServer, res, func() []gate.Out { return h.s.FromServer(res) })
	if !panicked {
		t.Fatal("the hook did not panic")
	}
	// 1: the handshake result was in the failed step's partial output;
	// 2: the queued listing must be answered as well.
	checkInternal(t, outs, "1", "2")
}

// TestKeptPageEventPanicLeavesHeldModernRequestUnanswered: the same hole on
// the 2026-07-28 path every stateless client takes — a tools/list without
// server/discover is held, the gate verifies the profile, and the held
// request is answered from the kept page inside the server's step. The
// Event sink panics at the "list" event: Fail answers nothing, and the
// request that started the round never gets an answer.
func TestKeptPageEventPanicLeavesHeldModernRequestUnanswered(t *testing.T) {
	t.Parallel()
	hooks := gate.Hooks{
		// A host policy that shows every definition as it is...
		Shape: func(string, contract.Kind, []contract.Definition) []gate.Shape { return nil },
		// ...and an audit sink that fails on the listing's event.
		Event: func(e gate.Event) {
			if e.Op == "list" {
				panic("event sink bug")
			}
		},
	}
	srv := newFakeServer(toolWeather)
	srv.modern = true
	srv.manual["tools/list"] = true
	h, _ := hookHarness(t, hooks, srv)
	if got := h.client(modernReq(7, "tools/list", `{}`, "")); len(got) != 0 {
		t.Fatalf("held request answered early: %q", got)
	}
	if len(srv.pendingManual) != 1 {
		t.Fatalf("gate's own listing: %v", srv.pendingManual)
	}
	own := srv.pendingManual[0]
	res := jsonrpc.NewResult(own.ID, []byte(`{"tools":[`+toolWeather+`]}`))
	outs, panicked := step(h, gate.ToServer, res, func() []gate.Out { return h.s.FromServer(res) })
	if !panicked {
		t.Fatal("the hook did not panic")
	}
	checkInternal(t, outs, "7")
}

// TestKeptPagesNotServedToAnotherProfile (holds): in a 2026-07-28 session,
// profile B's round drops profile A's kept pages, B's first listing gets
// B's own verified page, and A's next listing goes to the server.
func TestKeptPagesNotServedToAnotherProfile(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather)
	srv.modern = true
	h := newHarness(t, t.TempDir(), pin.Guard, srv)
	if got := h.client(modernReq(1, "tools/list", `{}`, "")); len(got) != 1 || !strings.Contains(got[0], "get_weather") {
		t.Fatalf("profile A: %q", got)
	}
	asked := srv.received["tools/list"]
	// Profile B: the server lists one more tool to a client with roots.
	srv.lists["tools/list"] = []string{toolWeather, toolEcho}
	got := h.client(modernReq(2, "tools/list", `{"roots":{}}`, ""))
	if len(got) != 1 || !strings.Contains(got[0], `"echo"`) {
		t.Fatalf("profile B: %q", got)
	}
	if srv.received["tools/list"] != asked+1 {
		t.Fatalf("profile B's round listed %d times", srv.received["tools/list"]-asked)
	}
	// A's listing now is the server's, and the server's view for A has
	// an extra tool: drift, not B's kept page.
	got = h.client(modernReq(3, "tools/list", `{}`, ""))
	if code, _ := errorOf(t, got[0]); code != gate.CodeBlocked {
		t.Fatalf("profile A after B: %q", got)
	}
}

// TestKeptPageStillShapedByHostPolicy (holds): a tool the host withholds
// is withheld from the kept page too.
func TestKeptPageStillShapedByHostPolicy(t *testing.T) {
	t.Parallel()
	hooks := gate.Hooks{Shape: func(_ string, _ contract.Kind, defs []contract.Definition) []gate.Shape {
		out := make([]gate.Shape, len(defs))
		for i, d := range defs {
			if d.Name == "echo" {
				out[i] = gate.Shape{Withhold: true, Reason: "denied"}
			}
		}
		return out
	}}
	srv := newFakeServer(toolWeather, toolEcho)
	h, _ := hookHarness(t, hooks, srv)
	h.legacySession(initLegacy)
	got := h.listKept()
	if strings.Contains(got, `"echo"`) || !strings.Contains(got, "get_weather") {
		t.Fatalf("kept page not shaped: %s", got)
	}
}
