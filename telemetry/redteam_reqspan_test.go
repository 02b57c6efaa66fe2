package telemetry

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcpseal/mcpseal/contract"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// refusalFrame is the gate's answer to a request it refuses with reason
// (admitRequest's, for instance): the client's id, CodeRefused, the
// reason in data.
func refusalFrame(id int, reason string) string {
	return errorFrame(id, gate.CodeRefused, reason)
}

// TestRedTeamRepeatedIDRefusalEndsTheFirstCallsSpan: a client sends a
// tools/call with id 1, then, while the server still has it, another
// request under the same id. The gate refuses the repeat (admitRequest:
// id-collision) with an error carrying id 1; the first call is still in
// flight and the server answers it normally afterwards. The observer
// keys requests by id only: Took ignores the repeat (already pending),
// and Emitted takes the repeat's refusal for the first call's answer. The
// first call's span ends early with outcome refused and code
// id-collision (and the requests/refusals meters count it so), and the
// server's real answer finds nothing: a client can falsify the outcome
// and the duration of its earlier calls (over stdio; the HTTP gateway
// refuses a repeated id itself, before the gate and the observer see it).
// The first call's span should end with the server's answer, outcome ok:
// a refusal of a request the observer did not track is not the answer
// to the one it did.
func TestRedTeamRepeatedIDRefusalEndsTheFirstCallsSpan(t *testing.T) {
	t.Parallel()
	spans := tracedSession(t, func(s *Session) {
		took(t, s, callFrame(1, "echo", ""))
		forwarded(s, callFrame(1, "echo", ""))
		// The repeat: the gate answers it at once, never forwarding it.
		took(t, s, callFrame(1, "echo", ""))
		delivered(s, refusalFrame(1, gate.ReasonIDCollision))
		// The server answers the first call.
		answered(t, s, resultFrame(1))
		delivered(s, resultFrame(1))
	})
	var calls []*tracepb.Span
	for _, sp := range spans {
		if sp.Name == "tools/call echo" {
			calls = append(calls, sp)
		}
	}
	if len(calls) != 1 {
		t.Fatalf("%d tools/call spans, want the first call's", len(calls))
	}
	if got := attrsOf(calls[0]); got != callAttrs+"mcpseal.outcome=ok" {
		t.Errorf("the first call, answered by the server with a result, was recorded as %q (its span ended at the refusal of a later request with its id)", got)
	}
}

// TestRedTeamCancelledRequestsBlindTheSession: the gate gives up a
// forwarded request the transport can no longer answer (gate.Session.
// Cancel, called by the gateway's giveUp when its request timeout passes
// or the caller's token expires): it tells the server
// notifications/cancelled and forgets the request; the gateway writes
// its own answer to the HTTP response, so nothing is ever emitted to the
// client through the gate under the request's id. The observer is not
// told: the request stays in its pending map until the session closes
// (its span then ends as "unanswered", with the session's end as its
// end). A server that never answers makes every request time out at the
// gateway; after maxTracked (4096) of them the map is full and every
// later request of the session is untracked: no span, no request meters,
// for the rest of the session. A cancelled request should end (refused
// with the reason, or unanswered) and leave the map.
func TestRedTeamCancelledRequestsBlindTheSession(t *testing.T) {
	t.Parallel()
	tel, err := Start(Config{MetricsListen: "127.0.0.1:0", Getenv: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	s := tel.Session("srv", "label")
	defer s.Close()
	for id := 1; id <= maxTracked; id++ {
		f := callFrame(id, "echo", "")
		took(t, s, f)
		forwarded(s, f)
		// What Cancel does: the observer is told, the server is told, the
		// client gets nothing through the gate.
		s.Cancelled(jsonrpc.IDKey([]byte(strconv.Itoa(id))), "token-expired")
		s.Emitted([]gate.Out{{To: gate.ToServer, Frame: []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + strconv.Itoa(id) + `,"reason":"mcpseal: token-expired"}}`)}})
	}
	before := tel.m.untracked.series.get(labels{}, newUint).Load()
	f := callFrame(maxTracked+1, "echo", "")
	took(t, s, f)
	if after := tel.m.untracked.series.get(labels{}, newUint).Load(); after != before {
		s.mu.Lock()
		n := len(s.pending)
		s.mu.Unlock()
		t.Fatalf("after %d cancelled requests the next request is untracked (%d still pending, none of them ever to be answered)", maxTracked, n)
	}
}

// TestRedTeamUnsampledClientContextKeepsTheGatesTrace: with
// OTEL_TRACES_SAMPLER unset, a client's traceparent with flags 00 (and
// one with unknown flag bits set) must not switch off mcpseal's trace of
// the request: the request span is exported, sampled, as a child of the
// client's span, with the client's trace id and no flag bits but sampled.
// This held.
func TestRedTeamUnsampledClientContextKeepsTheGatesTrace(t *testing.T) {
	t.Parallel()
	const tid, pid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, flags := range []string{"00", "fe", "02"} {
		meta := `{"traceparent":"00-` + tid + `-` + pid + `-` + flags + `"}`
		spans := tracedSession(t, func(s *Session) {
			took(t, s, callFrame(1, "echo", meta))
			forwarded(s, callFrame(1, "echo", meta))
			answered(t, s, resultFrame(1))
			delivered(s, resultFrame(1))
		})
		found := false
		for _, sp := range spans {
			if sp.Name != "tools/call echo" {
				continue
			}
			found = true
			if hex.EncodeToString(sp.TraceId) != tid || hex.EncodeToString(sp.ParentSpanId) != pid || sp.Flags&0xff != 0x01 {
				t.Errorf("flags %s: trace %x parent %x flags %x", flags, sp.TraceId, sp.ParentSpanId, sp.Flags)
			}
		}
		if !found {
			t.Errorf("flags %s: the request span was not exported (%d spans)", flags, len(spans))
		}
	}
}

// TestRedTeamRequestSpansRaceTheExporter: request spans are queued by
// pointer and encoded by the batcher's goroutine while the session goes
// on: late server answers to ended requests, the same ids reused, the
// shapes cleared by a protocol change, Close from another goroutine in
// the middle of a request's answer, and flushes all the while. Run with
// -race. This held.
func TestRedTeamRequestSpansRaceTheExporter(t *testing.T) {
	t.Parallel()
	col := &spanCollector{t: t}
	srv := httptest.NewServer(col)
	defer srv.Close()
	tel, err := Start(Config{OTLPEndpoint: srv.URL, Getenv: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = tel.spans.ForceFlush(context.Background())
			}
		}
	}()
	for round := 0; round < 20; round++ {
		s := tel.Session("srv", "label")
		var mu sync.Mutex // the transport's lock
		step := func(f func()) { mu.Lock(); f(); mu.Unlock() }
		step(func() {
			took(t, s, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
			forwarded(s, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
			answered(t, s, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}`)
			delivered(s, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}`)
		})
		var cw sync.WaitGroup
		cw.Add(1)
		go func() {
			defer cw.Done()
			for i := 0; i < 200; i++ {
				id := i % 7
				step(func() {
					took(t, s, callFrame(id, "echo", ""))
					forwarded(s, callFrame(id, "echo", ""))
				})
				step(func() {
					answered(t, s, errorFrame(id, -32000, ""))
					delivered(s, errorFrame(id, -32000, ""))
					// A late, second answer to the ended request.
					answered(t, s, resultFrame(id))
					s.UpstreamHeaders([]byte(strconv.Itoa(id)))
				})
				if i%50 == 0 {
					step(func() {
						// A repeated initialize with another version clears the shapes.
						took(t, s, `{"jsonrpc":"2.0","id":"re","method":"initialize","params":{}}`)
						forwarded(s, `{"jsonrpc":"2.0","id":"re","method":"initialize","params":{}}`)
						answered(t, s, `{"jsonrpc":"2.0","id":"re","result":{"protocolVersion":"2025-0`+strconv.Itoa(i%9+1)+`-18"}}`)
						delivered(s, `{"jsonrpc":"2.0","id":"re","result":{}}`)
					})
				}
			}
		}()
		// Close from elsewhere, while the calls go on.
		_ = s.Close()
		cw.Wait()
	}
	close(stop)
	wg.Wait()
	if err := tel.Close(); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, sp := range col.spans {
		if bytes.Contains([]byte(sp.String()), []byte("MARKER")) {
			t.Errorf("span %q carries content", sp.Name)
		}
	}
}

// TestRedTeamConfirmSpanUnderTheWrongCall: a call's Call verdict is Later
// (a preflight provider runs on another goroutine), and meanwhile the
// client's next call, of another tool, is decided at once (Allow) and
// forwarded. The first call's preflight then asks for a confirmation:
// the gate's confirm event names that call (Name slow, Request n:1). The
// session starts the mcpseal.confirm span under s.decided, the call the
// Call hook decided last, which is now the echo call: the confirmation of
// "slow" is recorded under "tools/call echo", with gen_ai.tool.name=echo,
// and ended when echo is answered, while the person is still being asked
// about "slow"; the real answer finds nothing in s.asking. The event
// carries the request's id key; the span should be started under that
// request's span.
func TestRedTeamConfirmSpanUnderTheWrongCall(t *testing.T) {
	t.Parallel()
	spans := tracedSession(t, func(s *Session) {
		h := s.Hooks(gate.Hooks{Call: func(ci gate.CallInfo) gate.Verdict {
			if ci.Tool.Name == "slow" {
				return gate.Verdict{Kind: gate.Later, Work: func() gate.Verdict { return gate.Verdict{Kind: gate.Confirm} }}
			}
			return gate.Verdict{Kind: gate.Allow}
		}})
		took(t, s, callFrame(1, "slow", ""))
		v := h.Call(gate.CallInfo{Tool: contract.Definition{Name: "slow"}, Request: "n:1"})
		took(t, s, callFrame(2, "echo", ""))
		h.Call(gate.CallInfo{Tool: contract.Definition{Name: "echo"}, Request: "n:2"})
		forwarded(s, callFrame(2, "echo", ""))
		// The preflight ends: the gate asks the person about call 1.
		if v.Kind != gate.Later || v.Work().Kind != gate.Confirm {
			t.Fatal("verdict not passed through")
		}
		h.Event(gate.Event{Op: "confirm", Outcome: "asked", Kind: contract.Tools, Name: "slow", Request: "n:1"})
		answered(t, s, resultFrame(2))
		delivered(s, resultFrame(2))
		h.Event(gate.Event{Op: "confirm", Outcome: "accepted", Kind: contract.Tools, Name: "slow", Request: "n:1"})
		forwarded(s, callFrame(1, "slow", ""))
		answered(t, s, resultFrame(1))
		delivered(s, resultFrame(1))
	})
	byID := map[string]*tracepb.Span{}
	for _, sp := range spans {
		byID[string(sp.SpanId)] = sp
	}
	found := false
	for _, sp := range spans {
		if sp.Name != "mcpseal.confirm" {
			continue
		}
		found = true
		parent := "none"
		if p := byID[string(sp.ParentSpanId)]; p != nil {
			parent = p.Name
		}
		if parent != "tools/call slow" || attrsOf(sp) != "gen_ai.tool.name=slow;mcpseal.outcome=accepted" {
			t.Errorf("the confirmation asked about call 1 (slow) is a child of %q with %q", parent, attrsOf(sp))
		}
	}
	if !found {
		t.Error("no mcpseal.confirm span")
	}
}

// TestRedTeamPreflightSpanUnderALookalikeCall: under the monitor posture
// a call of a tool outside the verified contract is forwarded without
// reaching the Call hook; its request stays in s.calls until the server
// answers it. decide pairs a Call verdict with the first pending call
// whose SafeName'd tool equals the verified tool's: a client that first
// calls "get weather" (unknown; SafeName "get_weather") and then the
// verified "get_weather" gets the real call's preflight span parented to
// the lookalike call's request span, and the real call left in s.calls,
// where the next get_weather verdict will be paired with it in turn. The
// hook's CallInfo is not tied to a request by name; the pairing should go
// by the request (the gate knows its id key).
func TestRedTeamPreflightSpanUnderALookalikeCall(t *testing.T) {
	t.Parallel()
	spans := tracedSession(t, func(s *Session) {
		h := s.Hooks(gate.Hooks{Call: func(ci gate.CallInfo) gate.Verdict {
			return gate.Verdict{Kind: gate.Later, Work: func() gate.Verdict { return gate.Verdict{Kind: gate.Allow} }}
		}})
		// The lookalike: unknown, forwarded under monitor, no hook.
		tookUnknown(t, s, callFrame(1, "get weather", ""))
		forwarded(s, callFrame(1, "get weather", ""))
		// The verified tool.
		took(t, s, callFrame(2, "get_weather", ""))
		v := h.Call(gate.CallInfo{Tool: contract.Definition{Name: "get_weather"}, Request: "n:2"})
		v.Work()
		forwarded(s, callFrame(2, "get_weather", ""))
		answered(t, s, errorFrame(1, -32602, ""))
		delivered(s, errorFrame(1, -32602, ""))
		answered(t, s, resultFrame(2))
		delivered(s, resultFrame(2))
	})
	byID := map[string]*tracepb.Span{}
	for _, sp := range spans {
		byID[string(sp.SpanId)] = sp
	}
	for _, sp := range spans {
		if sp.Name != "mcpseal.preflight" {
			continue
		}
		p := byID[string(sp.ParentSpanId)]
		if p == nil || p.Name != "tools/call get_weather" || p.Status.GetCode() == failed {
			var what string
			if p != nil {
				what = p.Name + " " + attrsOf(p)
			}
			t.Errorf("the preflight of call 2 (verified get_weather, answered ok) is a child of %q", what)
		}
		return
	}
	t.Error("no mcpseal.preflight span")
}

// TestRedTeamRepeatInABatchEndsTheFirstCallsSpan: the repeated-id attack
// above, with one more message after the repeat in the same JSON-RPC
// batch (protocol 2025-03-26 has batches; the gate takes each element in
// turn, then emits all the step's frames at once). The observer forgets
// the repeat at the next element's Took (dups is reset on every Took),
// so the gate's id-collision refusal of the repeat again ends the first
// call's span, refused, and its real answer finds nothing. The sequence
// is the one gate.Session gives its observer for the batch
// [tools/call id 3, ping id 9] while call 3 is in flight.
func TestRedTeamRepeatInABatchEndsTheFirstCallsSpan(t *testing.T) {
	t.Parallel()
	spans := tracedSession(t, func(s *Session) {
		took(t, s, callFrame(3, "echo", ""))
		forwarded(s, callFrame(3, "echo", ""))
		// The batch: the repeat, then a ping; one Emitted for both.
		s.Took(gate.ToClient, peeked(t, callFrame(3, "echo", "")))
		s.Took(gate.ToClient, peeked(t, `{"jsonrpc":"2.0","id":9,"method":"ping"}`))
		s.Emitted([]gate.Out{{To: gate.ToClient, Frame: []byte(refusalFrame(3, gate.ReasonIDCollision))},
			{To: gate.ToServer, Frame: []byte(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)}})
		answered(t, s, resultFrame(9))
		delivered(s, resultFrame(9))
		// The server answers the first call.
		answered(t, s, resultFrame(3))
		delivered(s, resultFrame(3))
	})
	found := false
	for _, sp := range spans {
		if sp.Name != "tools/call echo" {
			continue
		}
		found = true
		if got := attrsOf(sp); got != callAttrs+"mcpseal.outcome=ok" {
			t.Errorf("the first call, answered by the server with a result, was recorded as %q (ended at the refusal of the repeat in a batch)", got)
		}
	}
	if !found {
		t.Error("no span of the first call")
	}
}

// TestRedTeamReplayedRequestAnsweredInItsStepIsUnanswered: a request the
// client sends before the contract is verified (a legacy client
// pipelining tools/list after initialize; every modern session's first
// requests) is queued by the gate, which tells the observer it took it;
// once verified the gate replays the queue and tells the observer again
// (Took twice for one request). The second Took sees the id pending and
// records it as a repeat; when the gate answers the replayed request in
// that same step (a listing from the verified pages, a refusal), its
// answer is skipped as the repeat's refusal: the request stays pending,
// its span ends as "unanswered" when the session closes (with the whole
// session as its duration), and the requests meter counts it so. The
// sequence is the one gate.Session gives its observer (initialize
// answered by the server after tools/list id 2 was queued).
func TestRedTeamReplayedRequestAnsweredInItsStepIsUnanswered(t *testing.T) {
	t.Parallel()
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	spans := tracedSession(t, func(s *Session) {
		s.Took(gate.ToClient, peeked(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		forwarded(s, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
		s.Took(gate.ToClient, peeked(t, list)) // queued
		// The server's answer; the gate verifies, lists, then replays.
		answered(t, s, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`)
		s.Took(gate.ToClient, peeked(t, list)) // replayed
		s.Emitted([]gate.Out{{To: gate.ToClient, Frame: []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`)},
			{To: gate.ToClient, Frame: []byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)}})
		_ = s.Close()
	})
	found := false
	for _, sp := range spans {
		if sp.Name != "tools/list" {
			continue
		}
		found = true
		if got := attrsOf(sp); !strings.Contains(got, "mcpseal.outcome=ok") {
			t.Errorf("the queued tools/list, answered by the gate when it was replayed, was recorded as %q", got)
		}
	}
	if !found {
		t.Error("no tools/list span")
	}
}

// TestRedTeamReplayedCallKeepsItsDecisionAndPreflight: a tools/call
// queued behind the handshake and replayed once the contract is verified
// (the gate takes it twice; the Call hook decides it at the replay, with
// a preflight provider): its span is named after its tool, and the
// preflight span is its child, not the child of a span never exported.
func TestRedTeamReplayedCallKeepsItsDecisionAndPreflight(t *testing.T) {
	t.Parallel()
	spans := tracedSession(t, func(s *Session) {
		h := s.Hooks(gate.Hooks{Call: func(gate.CallInfo) gate.Verdict {
			return gate.Verdict{Kind: gate.Later, Work: func() gate.Verdict { return gate.Verdict{Kind: gate.Allow} }}
		}})
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
		s.Took(gate.ToClient, peeked(t, init))
		forwarded(s, init)
		s.Took(gate.ToClient, peeked(t, callFrame(3, "echo", ""))) // queued
		answered(t, s, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`)
		s.Took(gate.ToClient, peeked(t, callFrame(3, "echo", ""))) // replayed
		v := h.Call(gate.CallInfo{Tool: contract.Definition{Name: "echo"}, Request: "n:3"})
		delivered(s, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`)
		v.Work()
		forwarded(s, callFrame(3, "echo", ""))
		answered(t, s, resultFrame(3))
		delivered(s, resultFrame(3))
	})
	byID := map[string]*tracepb.Span{}
	for _, sp := range spans {
		byID[string(sp.SpanId)] = sp
	}
	found := false
	for _, sp := range spans {
		if sp.Name != "mcpseal.preflight" {
			continue
		}
		found = true
		p := byID[string(sp.ParentSpanId)]
		if p == nil || p.Name != "tools/call echo" || !strings.Contains(attrsOf(p), "mcpseal.outcome=ok") {
			var names []string
			for _, x := range spans {
				names = append(names, x.Name)
			}
			t.Errorf("the replayed call's preflight has parent %v among %q", p, names)
		}
	}
	if !found {
		t.Error("no preflight span")
	}
}
