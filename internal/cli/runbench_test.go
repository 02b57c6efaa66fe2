package cli

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// BenchmarkRunGateCall is one tools/call round trip through the session
// gate with the hooks `mcpseal run` builds by default (the built-in host
// policy with its schema check, the audit log in a temporary home), as a
// 2026-07-28 client sends it: the request's step and the response's. No
// pipes and no processes: what is left is the gate's work on the call's
// path, warm. Every auditPace calls the clock stops while the audit writer
// catches up (else its queue fills, and audit.required refuses the calls,
// as it must): its own cost is audit's BenchmarkAppendBatch.
func BenchmarkRunGateCall(b *testing.B) {
	g, closeGuard := benchGate(b)
	defer closeGuard()
	req := []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpseal-bench","version":"v1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"text":"hello"},"name":"echo"}}`)
	resp := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n++; n%auditPace == 0 {
			b.StopTimer()
			time.Sleep(auditGather + 10*time.Millisecond)
			b.StartTimer()
		}
		if out := g.FromClient(req); len(out) != 1 || out[0].To != gate.ToServer {
			b.Fatalf("request: %d frames: %q", len(out), out)
		}
		if out := g.FromServer(resp); len(out) != 1 || out[0].To != gate.ToClient {
			b.Fatalf("response: %d frames: %q", len(out), out)
		}
	}
}

// auditPace is how many calls' events a batch of a busy session holds: 50
// ms (auditGather) of calls at 2,000 a second, two events each.
const auditPace = 200

// benchGate is a verified 2026-07-28 session with run's default hooks in
// front of an in-memory echo server.
func benchGate(b *testing.B) (*gate.Session, func()) {
	home := b.TempDir()
	e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string {
		if k == "MCPSEAL_HOME" {
			return home
		}
		return ""
	}}
	argv := []string{"bench-echo-server"}
	id := pin.IdentityForArgv(argv)
	log := slog.New(slog.DiscardHandler)
	guard, err := buildGuard(e, hostSpec{id: id, argv: argv, posture: pin.Guard}, log)
	if err != nil {
		b.Fatal(err)
	}
	g := gate.New(gate.Config{Identity: id, Posture: pin.Guard, Pins: guard.baseline, Hooks: guard.hooks,
		IDPrefix: gate.NewIDPrefix(), Logger: log, ConfirmTimeout: guard.confirmTimeout})
	// Slow decisions (after_connect) run once the step that asked returns,
	// as stdio runs them on their own goroutine.
	var later []func() []gate.Out
	g.SetDispatch(func(work func() gate.Verdict, resume func(gate.Verdict) []gate.Out) {
		later = append(later, func() []gate.Out { return resume(work()) })
	})
	// The server answers the gate's own listing; the client's probe is
	// answered once the contract verified.
	var serve func(outs []gate.Out) [][]byte
	serve = func(outs []gate.Out) [][]byte {
		var toClient [][]byte
		for len(later) > 0 {
			run := later[0]
			later = later[1:]
			outs = append(outs, run()...)
		}
		for _, o := range outs {
			if o.To == gate.ToClient {
				toClient = append(toClient, o.Frame)
				continue
			}
			m, err := jsonrpc.Peek(o.Frame)
			if err != nil || m.Kind != jsonrpc.Request {
				continue
			}
			var result string
			switch m.Method {
			case "server/discover":
				result = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}`
			case "tools/list":
				result = `{"tools":[{"name":"echo","description":"Repeats the text it is given.","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"Text to repeat"}},"required":["text"]}}]}`
			default:
				b.Fatalf("the bench server got %s", m.Method)
			}
			toClient = append(toClient, serve(g.FromServer(jsonrpc.NewResult(m.ID, []byte(result))))...)
		}
		return toClient
	}
	got := serve(g.FromClient([]byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpseal-bench","version":"v1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)))
	if len(got) != 1 || g.Status().Closed {
		b.Fatalf("the session did not verify: %q, %+v", got, g.Status())
	}
	return g, guard.close
}
