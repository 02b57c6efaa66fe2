package telemetry

import (
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
