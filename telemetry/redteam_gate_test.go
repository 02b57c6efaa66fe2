package telemetry

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// gateDriven runs a real gate.Session observed by s against a minimal
// server (one tool, echo), that answers at once except initialize, which
// waits until answerInit is called.
type gateDriven struct {
	t    *testing.T
	g    *gate.Session
	init []byte // the held initialize's id
	got  []string
}

func newGateDriven(t *testing.T, s *Session) *gateDriven {
	store, err := pin.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := &gateDriven{t: t}
	d.g = gate.New(gate.Config{Identity: pin.IdentityForName("srv"), Pins: store, IDPrefix: "rt", Now: time.Now,
		Hooks: s.Hooks(gate.Hooks{Call: func(gate.CallInfo) gate.Verdict { return gate.Verdict{Kind: gate.Allow} }})})
	return d
}

func (d *gateDriven) pump(outs []gate.Out) {
	for len(outs) > 0 {
		o := outs[0]
		outs = outs[1:]
		if o.To == gate.ToClient {
			d.got = append(d.got, string(o.Frame))
			continue
		}
		m, err := jsonrpc.Peek(o.Frame)
		if err != nil || m.Kind != jsonrpc.Request {
			continue
		}
		var res string
		switch m.Method {
		case "initialize":
			d.init = append([]byte(nil), m.ID...)
			continue
		case "tools/list":
			res = `{"tools":[{"name":"echo","description":"Echo.","inputSchema":{"type":"object"}}]}`
		case "server/discover":
			res = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`
		case "tools/call":
			res = `{"content":[{"type":"text","text":"MARKER-RESULT"}]}`
		default:
			res = `{}`
		}
		outs = append(outs, d.g.FromServer(jsonrpc.NewResult(m.ID, []byte(res)))...)
	}
}

func (d *gateDriven) client(frame string) { d.pump(d.g.FromClient([]byte(frame))) }

func (d *gateDriven) answerInit(version string) {
	d.pump(d.g.FromServer(jsonrpc.NewResult(d.init, []byte(`{"protocolVersion":"`+version+`","capabilities":{"tools":{}},"serverInfo":{"name":"x","version":"1"}}`))))
}

// TestRedTeamGateDrivenPipelinedAndBatchedRequests: the two sequences of
// TestRedTeamReplayedRequestAnsweredInItsStepIsUnanswered and
// TestRedTeamRepeatInABatchEndsTheFirstCallsSpan, made by the real gate:
// a client pipelines a tools/call and tools/list behind initialize
// (queued, then replayed once the contract is verified), then sends a
// batch with a repeat of an id in flight. Every request the client got
// its answer to ends ok, none unanswered or refused for a repeat.
func TestRedTeamGateDrivenPipelinedAndBatchedRequests(t *testing.T) {
	t.Parallel()
	var d *gateDriven
	spans := tracedSession(t, func(s *Session) {
		d = newGateDriven(t, s)
		d.client(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		d.client(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		d.client(callFrame(3, "echo", ""))
		d.client(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`) // last: still a "repeat" when it is answered
		d.answerInit("2025-03-26")
		// A batch: a new call (held by nothing: answered at once) and, in
		// the same batch, a repeat of it, then a ping.
		d.client(`[` + callFrame(4, "echo", "") + `,` + callFrame(4, "echo", "") + `,{"jsonrpc":"2.0","id":5,"method":"ping"}]`)
		_ = s.Close()
	})
	if len(d.got) < 5 {
		t.Fatalf("the client got %q", d.got)
	}
	outcomes := map[string][]string{}
	for _, sp := range spans {
		for _, kv := range sp.Attributes {
			if kv.Key == attrOutcome && sp.Kind == tracepb.Span_SPAN_KIND_SERVER {
				outcomes[sp.Name] = append(outcomes[sp.Name], kv.Value.GetStringValue())
			}
		}
	}
	t.Logf("client got %q", d.got)
	for name, want := range map[string]int{"initialize": 1, "tools/list": 1, "tools/call echo": 2, "ping": 1} {
		got := outcomes[name]
		ok := len(got) == want
		for _, o := range got {
			ok = ok && o == "ok"
		}
		if !ok {
			t.Errorf("%s: outcomes %q, want %d ok", name, got, want)
		}
	}
}

// TestRedTeamGateDrivenModernFirstListing: a modern (2026-07-28) client's
// first request, a tools/list, starts the contract check: the gate
// queues it, discovers and lists, then replays it and answers it from
// the page it verified, in one step. It is the first request of every
// such session; its span must end ok, not "unanswered" at Close.
func TestRedTeamGateDrivenModernFirstListing(t *testing.T) {
	t.Parallel()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	var d *gateDriven
	spans := tracedSession(t, func(s *Session) {
		d = newGateDriven(t, s)
		d.client(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + meta + `}}`)
		_ = s.Close()
	})
	if len(d.got) != 1 {
		t.Fatalf("the client got %q", d.got)
	}
	found := false
	for _, sp := range spans {
		if sp.Name != "tools/list" || sp.Kind != tracepb.Span_SPAN_KIND_SERVER {
			continue
		}
		found = true
		if got := attrsOf(sp); !strings.Contains(got, "mcpseal.outcome=ok") {
			t.Errorf("the first listing, answered (%.60s...), was recorded as %q", d.got[0], got)
		}
	}
	if !found {
		t.Error("no tools/list span")
	}
}

// TestRedTeamGateDrivenRandomBatches: random single requests and batches
// (with repeated ids inside a batch) through the real gate, to a server
// that answers everything at once: at Close nothing is in flight, so no
// request span may end "unanswered", and the request spans that end ok
// are exactly the results the client received.
func TestRedTeamGateDrivenRandomBatches(t *testing.T) {
	t.Parallel()
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 5))
		var d *gateDriven
		spans := tracedSession(t, func(s *Session) {
			d = newGateDriven(t, s)
			d.client(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			d.client(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			msg := func() string {
				id := rng.IntN(4)
				switch rng.IntN(3) {
				case 0:
					return callFrame(id, "echo", "")
				case 1:
					return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/list","params":{}}`
				}
				return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"ping"}`
			}
			for i := range 300 {
				if i == 2 {
					d.answerInit("2025-03-26") // two steps queued behind the handshake
					// The first listing, answered from the verified page: a
					// request the gate answers in the step that takes it,
					// which TestRedTeamIDReusedInABatchHidesTheCall is about.
					d.client(`{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{}}`)
				}
				if rng.IntN(2) == 0 {
					d.client(msg())
					continue
				}
				n := 1 + rng.IntN(4)
				b := "["
				for j := range n {
					if j > 0 {
						b += ","
					}
					b += msg()
				}
				d.client(b + "]")
			}
			_ = s.Close()
		})
		results := 0
		for _, f := range d.got {
			for _, line := range splitBatch(t, f) {
				if m, err := jsonrpc.Peek(line); err == nil && m.Kind == jsonrpc.Response && m.Error == nil && string(m.ID) != `"i"` {
					results++
				}
			}
		}
		ok := 0
		for _, sp := range spans {
			if sp.Kind != tracepb.Span_SPAN_KIND_SERVER || sp.Name == "initialize" {
				continue
			}
			switch a := attrsOf(sp); {
			case strings.Contains(a, "mcpseal.outcome=unanswered"):
				t.Errorf("seed %d: %s ended unanswered with nothing in flight: %s", seed, sp.Name, a)
			case strings.Contains(a, "mcpseal.outcome=ok"):
				ok++
			}
		}
		if ok != results {
			t.Errorf("seed %d: %d request spans ok, the client received %d results", seed, ok, results)
			outcomes := map[string]int{}
			for _, sp := range spans {
				if sp.Kind == tracepb.Span_SPAN_KIND_SERVER {
					outcomes[sp.Name+" "+attrsOf(sp)]++
				}
			}
			t.Logf("%v", outcomes)
			kinds := map[string]int{}
			for _, f := range d.got {
				for _, line := range splitBatch(t, f) {
					l := string(line)
					switch {
					case strings.Contains(l, `"result":{}`):
						kinds["ping"]++
					case strings.Contains(l, `"tools":[`):
						kinds["list"]++
					case strings.Contains(l, `"content"`):
						kinds["call"]++
					}
				}
			}
			t.Logf("client results %v", kinds)
			for i, f := range d.got {
				if i < 12 {
					t.Logf("got %.200s", f)
				}
			}
		}
	}
}

// splitBatch returns the messages of a frame: itself, or a batch's
// elements.
func splitBatch(t *testing.T, frame string) [][]byte {
	if !strings.HasPrefix(frame, "[") {
		return [][]byte{[]byte(frame)}
	}
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(frame), &raw); err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(raw))
	for i, r := range raw {
		out[i] = r
	}
	return out
}

// TestRedTeamIDReusedInABatchHidesTheCall: in one batch, a request the
// gate answers at once (a call of a tool outside the contract, refused
// unknown-tool; or the session's first listing, answered from the
// verified page) and then a call of a real tool under the same id. The
// gate answers the first before it takes the second, so the id is free
// and the call is forwarded and answered. The observer sees both Took
// before the step's one Emitted: the second under a pending id, taken
// for a repeat and not tracked. The forwarded call, answered with a
// result, has no span and is missing from the requests meter, and the
// Call hook's decision for it (decide, by the pending id) renames the
// refused request's span after the real tool: the exported trace shows
// "tools/call echo" refused unknown-tool, and no echo call that ran. A
// client can hide any call from traces and request metrics this way
// (the gate's audit events still have it). The observer now keeps every
// request taken under a pending id, in order, until Emitted says which
// it was (Session.dups).
func TestRedTeamIDReusedInABatchHidesTheCall(t *testing.T) {
	t.Parallel()
	var d *gateDriven
	spans := tracedSession(t, func(s *Session) {
		d = newGateDriven(t, s)
		d.client(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		d.answerInit("2025-03-26")
		d.client(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		d.client(`[` + callFrame(1, "nosuch", "") + `,` + callFrame(1, "echo", "") + `]`)
		_ = s.Close()
	})
	answered := false
	for _, f := range d.got {
		answered = answered || strings.Contains(f, "MARKER-RESULT")
	}
	if !answered {
		t.Fatalf("the echo call was not answered: %q", d.got)
	}
	var calls []string
	for _, sp := range spans {
		if strings.HasPrefix(sp.Name, "tools/call") {
			calls = append(calls, sp.Name+" {"+attrsOf(sp)+"}")
		}
	}
	slices.Sort(calls)
	want := []string{
		"tools/call {error.type=-32006;mcp.method.name=tools/call;mcp.protocol.version=2025-03-26;mcp.session.id=SESSION;mcpseal.outcome=refused;mcpseal.refusal.code=unknown-tool;rpc.response.status_code=-32006}",
		"tools/call echo {gen_ai.operation.name=execute_tool;gen_ai.tool.name=echo;mcp.method.name=tools/call;mcp.protocol.version=2025-03-26;mcp.session.id=SESSION;mcpseal.outcome=ok}",
	}
	slices.Sort(want)
	if !slices.Equal(calls, want) {
		t.Errorf("the refused call and the answered echo call under its id:\n got %q\nwant %q", calls, want)
	}
}
