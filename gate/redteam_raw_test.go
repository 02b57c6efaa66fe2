package gate_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// rawServer drives a gate whose server is a function: the red team's
// memory tests, which need frames no fakeServer writes (padded
// envelopes, huge cursors). The tests that use it measure the heap, so
// none of them runs in parallel.
type rawServer struct {
	s *gate.Session
	// answer returns the result of a request to the server, or "" to
	// leave it unanswered.
	answer func(m jsonrpc.Message) string
	// envelope is added to every response, after "result".
	envelope string
	// toClient sees every frame the client gets.
	toClient func(frame []byte)
}

const legacyInitResult = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"f","version":"1"}}`

func newRawServer(t *testing.T, limits gate.Limits, answer func(jsonrpc.Message) string) *rawServer {
	t.Helper()
	store, err := pin.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := gate.New(gate.Config{Identity: pin.IdentityForName("test-server"), Posture: pin.Guard, Pins: store, IDPrefix: "mcpseal-test", Limits: limits})
	return &rawServer{s: s, answer: answer, toClient: func([]byte) {}}
}

func (r *rawServer) client(frame string) { r.handle(r.s.FromClient([]byte(frame))) }

func (r *rawServer) handle(outs []gate.Out) {
	for _, o := range outs {
		if o.To == gate.ToClient {
			r.toClient(o.Frame)
			continue
		}
		m, err := jsonrpc.Peek(o.Frame)
		if err != nil || m.Kind != jsonrpc.Request {
			continue
		}
		if res := r.answer(m); res != "" {
			r.handle(r.s.FromServer([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s%s}`, m.ID, res, r.envelope))))
		}
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
