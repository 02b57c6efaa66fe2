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

// TestRTListingBytesCountTheFrameNotTheResult (red team): the gate keeps
// each page's items (and the kept result) as subslices of the page's
// frame, so the whole frame stays alive until the verdict; but
// MaxListingBytes (and MaxHeldBytes for the kept pages) count only
// len(result). A server that pads each listing frame with an envelope
// member the gate ignores holds MaxPages full frames (1000 x 16 MiB by
// default) while the count stays tiny.
func TestRTListingBytesCountTheFrameNotTheResult(t *testing.T) {
	const pages, pad = 40, 2 << 20 // 80 MiB of frames against a 1 MiB limit
	store, err := pin.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := gate.New(gate.Config{
		Identity: pin.IdentityForName("test-server"), Posture: pin.Guard, Pins: store, IDPrefix: "mcpseal-test",
		Limits: gate.Limits{MaxListingBytes: 1 << 20, MaxPages: 1000},
	})
	padding := strings.Repeat(" ", pad)
	var closed bool
	page := 0
	var handle func(outs []gate.Out)
	handle = func(outs []gate.Out) {
		for _, o := range outs {
			if o.To == gate.ToClient {
				if strings.Contains(string(o.Frame), gate.ReasonListingTooLarge) {
					closed = true
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
				if page == pages {
					runtime.GC()
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					t.Logf("after %d pages: heap in use %d MiB, limit 1 MiB", page-1, ms.HeapAlloc>>20)
					if ms.HeapAlloc > 32<<20 {
						t.Errorf("the gate holds %d MiB of listing frames under MaxListingBytes = 1 MiB", ms.HeapAlloc>>20)
					}
				}
				next := ""
				if page < pages {
					next = fmt.Sprintf(`,"nextCursor":"p%d"`, page)
				}
				res = fmt.Sprintf(`{"tools":[{"name":"t%d","inputSchema":{"type":"object"}}]%s}`, page, next)
			default:
				continue
			}
			frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s,"x":"%s"}`, m.ID, res, padding)
			handle(s.FromServer([]byte(frame)))
		}
	}
	handle(s.FromClient([]byte(initLegacy)))
	if closed {
		t.Log("closed listing-too-large")
	} else {
		t.Logf("session not closed after %d padded pages", page)
	}
}
