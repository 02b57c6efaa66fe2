package gate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// TestRedTeamLateAnswerToTimedOutCallReachesReusedID: a call times out
// (the host's call timeout): the gate answers the client, tells the server
// notifications/cancelled and forgets the id, so that "a late result is
// dropped". The client then sends its next call under the same id (id 3:
// the gate no longer has it in pending, so admitRequest lets it through).
// The server, which ignores cancellation (or was already writing), now
// answers the first call late. The gate cannot tell the two apart: the
// late result of the cancelled call is routed to the new call, checked by
// the result hook as the new call's result (CallInfo of the second tool),
// and delivered to the client as its answer, with an envelope keyed to
// the new request. A forgotten id should stay reserved (refused as a
// collision, or the late answer dropped) until the server answers it or
// the session ends; MCP forbids reusing an id in a session anyway.
func TestRedTeamLateAnswerToTimedOutCallReachesReusedID(t *testing.T) {
	t.Parallel()
	var checked []string
	hooks := gate.Hooks{
		Call: func(ci gate.CallInfo) gate.Verdict {
			if ci.Tool.Name == "get_weather" {
				return gate.Verdict{Kind: gate.Allow, Timeout: time.Second, TimeoutRefusal: gate.Refusal{Code: -32009, Reason: "call-timeout"}}
			}
			return gate.Verdict{Kind: gate.Allow}
		},
		Result: func(ci gate.CallInfo, result []byte) gate.Verdict {
			checked = append(checked, ci.Tool.Name+"="+string(result))
			return gate.Verdict{Kind: gate.Allow}
		},
	}
	srv := newFakeServer(toolWeather, toolEcho)
	srv.manual["tools/call"] = true
	h, _ := hookHarness(t, hooks, srv)
	h.legacySession(initLegacy)
	h.client(callWeather)
	h.now = h.now.Add(2 * time.Second)
	if got := h.pump(h.s.Tick()); len(got) != 1 {
		t.Fatalf("timeout: got %q", got)
	}
	// The client's next call, under the id the gate cancelled at the
	// server: refused as a collision until the server has answered it.
	got := h.client(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	if len(got) != 1 {
		t.Fatalf("second call with id 3: %q, want its refusal", got)
	}
	if _, data := errorOf(t, got[0]); data.Reason != gate.ReasonIDCollision {
		t.Fatalf("second call with id 3 refused with %q, want %s", data.Reason, gate.ReasonIDCollision)
	}
	// The server's late answer to the cancelled get_weather call.
	late := h.serverSays(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"WEATHER-OF-THE-CANCELLED-CALL"}]}}`)
	for _, f := range late {
		if strings.Contains(f, "WEATHER-OF-THE-CANCELLED-CALL") {
			t.Errorf("the cancelled call's late result reached the client as the answer to the echo call reusing id 3: %s (result hook saw %q)", f, checked)
		}
	}
	if len(late) != 0 || len(checked) != 0 {
		t.Errorf("the late answer was not dropped: %q, result hook saw %q", late, checked)
	}
	// Answered (late), the id is free again.
	if got := h.client(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`); len(got) != 0 {
		t.Fatalf("a call under the freed id 3 answered at once: %q", got)
	}
}

// TestRedTeamEnvelopeOfRewrittenIDs: ids the gate reads after unescaping
// (a string id with escapes, a number with an exponent, -0, whitespace
// around it) are routed by IDKey and handed on with an envelope; the
// harness's checkEnvelope compares every emitted frame's envelope with
// jsonrpc.Peek of the frame, and the key with IDKey. This held.
func TestRedTeamEnvelopeOfRewrittenIDs(t *testing.T) {
	t.Parallel()
	hooks := gate.Hooks{Call: func(ci gate.CallInfo) gate.Verdict { return gate.Verdict{Kind: gate.Allow} }}
	srv := newFakeServer(toolWeather)
	srv.manual["tools/call"] = true
	h, _ := hookHarness(t, hooks, srv)
	h.legacySession(initLegacy)
	ids := []string{`"a\u0062"`, `"ab\u00e9"`, `1e5`, `-0`, `100000000000000000000000000000000000001`, ` 7 `, `"\ud83d\ude00"`}
	for _, id := range ids {
		h.client(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}`)
	}
	if len(srv.pendingManual) != len(ids) {
		t.Fatalf("server got %d calls, want %d", len(srv.pendingManual), len(ids))
	}
	for i, m := range srv.pendingManual {
		// The server answers with the id spelled differently but equal
		// after decoding (strings), or exactly as sent (numbers).
		id := string(m.ID)
		if strings.HasPrefix(strings.TrimSpace(id), `"`) {
			s, err := jsonrpc.DecodeString(m.ID)
			if err != nil {
				t.Fatal(err)
			}
			id = string(jsonrpc.AppendString(nil, s))
		}
		got := h.serverSays(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[]}}`)
		if len(got) != 1 {
			t.Errorf("answer %d (id %s, sent as %s): client got %q", i, id, ids[i], got)
		}
	}
}
