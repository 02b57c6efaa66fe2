package gate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// step runs one gate step as a transport does: a panic is recovered and
// the session failed with the frame being handled.
func step(h *harness, from gate.Side, frame []byte, f func() []gate.Out) (outs []gate.Out, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			outs, panicked = h.s.Fail(from, frame), true
		}
	}()
	return f(), false
}

func checkInternal(t *testing.T, outs []gate.Out, wantIDs ...string) {
	t.Helper()
	var got []string
	for _, o := range outs {
		if o.To != gate.ToClient {
			t.Fatalf("Fail sent the server %s", o.Frame)
		}
		code, data := errorOf(t, string(o.Frame))
		if code != gate.CodeInternal || data.Reason != gate.ReasonInternal {
			t.Fatalf("Fail answered %s", o.Frame)
		}
		m, _ := jsonrpc.Peek(o.Frame)
		got = append(got, string(m.ID))
	}
	slices.Sort(got)
	slices.Sort(wantIDs)
	if strings.Join(got, " ") != strings.Join(wantIDs, " ") {
		t.Fatalf("Fail answered ids %v, want %v", got, wantIDs)
	}
}

func TestPanicInCallHookFailsClosed(t *testing.T) {
	t.Parallel()
	hooks := gate.Hooks{Call: func(gate.CallInfo) gate.Verdict { panic("hook bug: " + "secret-argument") }}
	srv := newFakeServer(toolWeather)
	srv.manual["tools/list"] = false
	h, _ := hookHarness(t, hooks, srv)
	h.legacySession(initLegacy)
	// A request forwarded and not answered yet: it must get the error too.
	srv.manual["prompts/list"] = true
	h.client(`{"jsonrpc":"2.0","id":"p","method":"prompts/list"}`)
	outs, panicked := step(h, gate.ToClient, []byte(callWeather), func() []gate.Out { return h.s.FromClient([]byte(callWeather)) })
	if !panicked {
		t.Fatal("the hook did not panic")
	}
	checkInternal(t, outs, `"p"`, "3")
	st := h.s.Status()
	if !st.Closed || st.Code != gate.CodeInternal || st.Reason != gate.ReasonInternal {
		t.Fatalf("status after Fail: %+v", st)
	}
	// Later requests get the error; nothing reaches the server either way.
	checkInternal(t, h.s.FromClient([]byte(listTools)), "2")
	if outs := h.s.FromServer([]byte(`{"jsonrpc":"2.0","id":"p","result":{"prompts":[]}}`)); len(outs) != 0 {
		t.Fatalf("a failed session forwarded %q", outs)
	}
}

func TestPanicInResultHookAnswersTheCall(t *testing.T) {
	t.Parallel()
	hooks := gate.Hooks{Result: func(gate.CallInfo, []byte) gate.Verdict { panic("result hook bug") }}
	srv := newFakeServer(toolWeather)
	srv.manual["tools/call"] = true
	h, _ := hookHarness(t, hooks, srv)
	h.legacySession(initLegacy)
	h.client(callWeather)
	res := []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`)
	// The gate took the call out of pending before the hook panicked: the
	// server's answer is the only trace of it.
	outs, panicked := step(h, gate.ToServer, res, func() []gate.Out { return h.s.FromServer(res) })
	if !panicked {
		t.Fatal("the hook did not panic")
	}
	checkInternal(t, outs, "3")
}

func TestPanicDuringReleaseDropsPartialOutput(t *testing.T) {
	t.Parallel()
	// finishRound keeps the round, and with it the held handshake's id,
	// until its hooks have run.
	// The Event hook panics when the contract verified: the held handshake
	// result must not be released, and the queued request is answered.
	hooks := gate.Hooks{Event: func(e gate.Event) {
		if e.Op == "connect" && e.Outcome == "verified" {
			panic("event sink bug")
		}
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
	checkInternal(t, outs, "1", "2")
}

func TestFailAnswersEachIDOnce(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather)
	srv.manual["tools/call"] = true
	h, _ := hookHarness(t, gate.Hooks{}, srv)
	h.legacySession(initLegacy)
	h.client(callWeather)
	// The same id pending, in the frame being handled and twice in a batch.
	batch := []byte(`[` + callWeather + `,` + callWeather + `,{"jsonrpc":"2.0","method":"notifications/x"}]`)
	checkInternal(t, h.s.Fail(gate.ToClient, batch), "3")
	checkInternal(t, h.s.Fail(gate.ToClient, nil))
}
