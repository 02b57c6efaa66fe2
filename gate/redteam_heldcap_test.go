package gate_test

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// TestRTHeldFramesCountLenNotCap (red team): MaxHeldBytes counts
// len(frame), but a frame longer than the Reader's 64 KiB buffer is
// gathered by readLong in a buffer that grows by doubling, so a frame of
// 8 MiB + 1 sits in a 16 MiB array. The held frames pin about twice the
// bound.
func TestRTHeldFramesCountLenNotCap(t *testing.T) {
	store, err := pin.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := gate.New(gate.Config{
		Identity: pin.IdentityForName("test-server"), Posture: pin.Guard, Pins: store, IDPrefix: "mcpseal-test",
		Limits: gate.Limits{MaxHeldBytes: 64 << 20},
	})
	s.FromClient([]byte(initLegacy)) // the handshake is at the server: its messages are held
	head := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`
	n := 8<<20 + 1 - len(head) - len(`"}}`)
	one := head + strings.Repeat("x", n) + `"}}` + "\n"
	r := jsonrpc.NewReader(strings.NewReader(strings.Repeat(one, 8)), 0)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	held := 0
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		if held == 0 {
			t.Logf("frame of %d bytes in a buffer of %d", len(f), cap(f))
		}
		s.FromServer(f)
		held += len(f)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("MaxHeldBytes 64 MiB; the session holds %d MiB of heap", grew>>20)
	if grew > 72<<20 {
		t.Errorf("held frames pin %d MiB under MaxHeldBytes = 64 MiB", grew>>20)
	}
	runtime.KeepAlive(s)
	runtime.KeepAlive(r)
	_ = bytes.MinRead
}
