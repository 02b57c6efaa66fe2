package gate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// TestCallersFillTheSharedSessionsProfiles: in a session several callers
// share, made-up profiles fill the MaxProfiles slots; with
// EvictIdleProfiles a new profile takes the place of the least recently
// used idle one instead of being refused, and a profile that was
// forgotten is verified again when it comes back.
func TestCallersFillTheSharedSessionsProfiles(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather)
	srv.modern = true
	h := newHarness(t, t.TempDir(), pin.Guard, srv, func(c *gate.Config) { c.EvictIdleProfiles = true })
	for i := 0; i < 40; i++ {
		got := h.client(modernReq(i+1, "tools/list", fmt.Sprintf(`{"x-flood-%d":{}}`, i), ""))
		if len(got) != 1 || !strings.Contains(got[0], `"get_weather"`) {
			t.Fatalf("profile %d: %v", i, got)
		}
	}
	if got := h.client(modernReq(100, "tools/list", `{"x-flood-0":{}}`, "")); len(got) != 1 || !strings.Contains(got[0], `"get_weather"`) {
		t.Fatalf("a forgotten profile coming back: %v", got)
	}
}

// TestEventsOfASharedSessionNameTheirRequestsCaller: the gate attributes
// each event to the request it is about, including the verification
// round a request started, and asks the transport for that request's
// caller.
func TestEventsOfASharedSessionNameTheirRequestsCaller(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather)
	srv.modern = true
	var events []gate.Event
	callers := map[string]*gate.Caller{jsonrpc.IDKey([]byte(`1`)): {Subject: "alice"}, jsonrpc.IDKey([]byte(`2`)): {Subject: "bob"}}
	h := newHarness(t, t.TempDir(), pin.Guard, srv, func(c *gate.Config) {
		c.Hooks.Event = func(e gate.Event) { events = append(events, e) }
		c.Hooks.Call = func(gate.CallInfo) gate.Verdict { return gate.Verdict{Kind: gate.Allow} }
		c.CallerOf = func(request string) *gate.Caller { return callers[request] }
	})
	h.client(modernReq(1, "tools/list", `{}`, ""))
	h.client(modernReq(2, "tools/call", `{}`, `"name":"get_weather","arguments":{"city":"Oslo"}`))
	seen := map[string]string{}
	for _, e := range events {
		if e.Caller == nil {
			t.Fatalf("event %+v names no caller", e)
		}
		seen[e.Op] = e.Caller.Subject
	}
	if seen["connect"] != "alice" || seen["call"] != "bob" {
		t.Fatalf("events attributed %v; want connect to alice (her request started the round), call to bob", seen)
	}
}

// TestHiddenToolIsAnsweredAsAMissingOneUnderMonitor: a tool hidden from
// its caller is refused as unknown even under monitor, where a tool the
// contract lacks is forwarded: hidden means not for this caller.
func TestHiddenToolIsAnsweredAsAMissingOneUnderMonitor(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather)
	srv.modern = true
	h := newHarness(t, t.TempDir(), pin.Monitor, srv, func(c *gate.Config) {
		c.Hidden = func(request, tool string) bool { return tool == "get_weather" }
	})
	got := h.client(modernReq(1, "tools/call", `{}`, `"name":"get_weather","arguments":{"city":"Oslo"}`))
	if len(got) != 1 || !strings.Contains(got[0], fmt.Sprintf(`"code":%d`, gate.CodeUnknownTool)) || !strings.Contains(got[0], "is not in the verified contract") {
		t.Fatalf("a hidden tool's call under monitor: %v", got)
	}
}

// TestAdmitSeesOnlyVerifiedVisibleTools: Config.Admit (the gateway's
// per-caller rate limits and confirmations) is never asked about a
// made-up name or a hidden tool, so neither is charged and both are
// answered as unknown, byte for byte but the name; a tool the caller may
// call is, and its refusal is the answer.
func TestAdmitSeesOnlyVerifiedVisibleTools(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather, toolEcho)
	srv.modern = true
	var asked []string
	h := newHarness(t, t.TempDir(), pin.Guard, srv, func(c *gate.Config) {
		c.Hidden = func(request, tool string) bool { return tool == "echo" }
		c.Admit = func(request, tool string) *gate.Refusal {
			asked = append(asked, tool)
			return &gate.Refusal{Code: -32009, Reason: "rate-limited"}
		}
	})
	hidden := h.client(modernReq(1, "tools/call", `{}`, `"name":"echo","arguments":{}`))
	missing := h.client(modernReq(1, "tools/call", `{}`, `"name":"no_such","arguments":{}`))
	if len(hidden) != 1 || len(missing) != 1 || strings.ReplaceAll(hidden[0], "echo", "N") != strings.ReplaceAll(missing[0], "no_such", "N") {
		t.Fatalf("hidden %v, missing %v", hidden, missing)
	}
	if len(asked) != 0 {
		t.Fatalf("Admit asked about %v", asked)
	}
	got := h.client(modernReq(2, "tools/call", `{}`, `"name":"get_weather","arguments":{"city":"Oslo"}`))
	if len(got) != 1 || !strings.Contains(got[0], `"code":-32009`) || !strings.Contains(got[0], `"rate-limited"`) || len(asked) != 1 {
		t.Fatalf("a visible tool's refused call: %v (asked %v)", got, asked)
	}
}
