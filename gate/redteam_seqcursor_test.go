package gate_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// TestRTSequencesKeepServerCursors (red team): the gate follows the
// client's own listings by the nextCursor each page names, keeping up to
// maxSequences (64) of them with no bound on a cursor's length and no
// expiry. A server that answers each client listing with a first page
// whose nextCursor is 8 MiB, to a client that reads only the first page,
// leaves 64 x 8 MiB in the session for its lifetime.
func TestRTSequencesKeepServerCursors(t *testing.T) {
	const lists, cursor = 64, 8 << 20
	store, err := pin.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := gate.New(gate.Config{
		Identity: pin.IdentityForName("test-server"), Posture: pin.Guard, Pins: store, IDPrefix: "mcpseal-test",
		Limits: gate.Limits{MaxHeldBytes: 1 << 10},
	})
	tools := `"tools":[{"name":"t","inputSchema":{"type":"object"}}]`
	n := 0
	var handle func(outs []gate.Out)
	handle = func(outs []gate.Out) {
		for _, o := range outs {
			if o.To == gate.ToClient {
				continue
			}
			m, err := jsonrpc.Peek(o.Frame)
			if err != nil || m.Kind != jsonrpc.Request {
				continue
			}
			var res string
			switch {
			case m.Method == "initialize":
				res = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"f","version":"1"}}`
			case m.Method == "tools/list" && strings.HasPrefix(string(m.ID), `"mcpseal`):
				res = `{` + tools + `}` // the gate's own listing: one page
			case m.Method == "tools/list":
				n++
				res = fmt.Sprintf(`{%s,"nextCursor":"%d%s"}`, tools, n, strings.Repeat("c", cursor))
			default:
				continue
			}
			handle(s.FromServer([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, res))))
		}
	}
	handle(s.FromClient([]byte(initLegacy)))
	handle(s.FromClient([]byte(initialized)))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range lists + 1 { // the first is answered from the kept page
		handle(s.FromClient([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, 100+i))))
	}
	if n != lists {
		t.Fatalf("the server answered %d client listings, want %d", n, lists)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("after %d first pages with 8 MiB cursors: %d MiB kept", lists, grew>>20)
	if grew > 64<<20 {
		t.Errorf("the session keeps %d MiB of cursors the client never followed", grew>>20)
	}
	runtime.KeepAlive(s)
}
