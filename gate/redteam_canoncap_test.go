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

// TestRTVerifiedContractPinsTheRawListing (red team): canon.Transform
// makes its output with capacity len(raw)+16, so a definition padded with
// whitespace inside its object keeps a Canonical of a few dozen bytes in a
// buffer the size of the raw definition. The verified contract holds those
// buffers for the whole session, after the round's pages are gone:
// MaxListingBytes bounds them during the round, nothing after it.
func TestRTVerifiedContractPinsTheRawListing(t *testing.T) {
	const pages, pad = 40, 2 << 20 // 80 MiB of whitespace, 40 tiny tools
	store, err := pin.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := gate.New(gate.Config{
		Identity: pin.IdentityForName("test-server"), Posture: pin.Guard, Pins: store, IDPrefix: "mcpseal-test",
		// Kept pages off, so that only the contract can hold anything.
		Limits: gate.Limits{MaxHeldBytes: 1 << 10, MaxPages: 1000},
	})
	padding := strings.Repeat(" ", pad)
	page := 0
	verified := false
	var handle func(outs []gate.Out)
	handle = func(outs []gate.Out) {
		for _, o := range outs {
			if o.To == gate.ToClient {
				if !strings.Contains(string(o.Frame), `"error"`) {
					verified = true
				}
				continue
			}
			m, err := jsonrpc.Peek(o.Frame)
			if err != nil || m.Kind != jsonrpc.Request {
				continue
			}
			var res string
			switch m.Method {
			case "initialize":
				res = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"f","version":"1"}}`
			case "tools/list":
				page++
				next := ""
				if page < pages {
					next = fmt.Sprintf(`,"nextCursor":"p%d"`, page)
				}
				res = fmt.Sprintf(`{"tools":[{"name":"t%d",%s"inputSchema":{"type":"object"}}]%s}`, page, padding, next)
			default:
				continue
			}
			handle(s.FromServer([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, res))))
		}
	}
	handle(s.FromClient([]byte(initLegacy)))
	if !verified {
		t.Fatal("the session did not verify")
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("verified %d tools of ~50 canonical bytes each; heap in use after the verdict: %d MiB", pages, ms.HeapAlloc>>20)
	if ms.HeapAlloc > 32<<20 {
		t.Errorf("the verified contract holds %d MiB of listing bytes for 40 definitions of ~50 bytes", ms.HeapAlloc>>20)
	}
	runtime.KeepAlive(s)
}
