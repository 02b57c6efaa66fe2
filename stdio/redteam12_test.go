package stdio

import (
	"testing"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// pushingWriter stands for the peer's reader goroutine: while a frame is
// being written (the outlet's lock released), another frame arrives.
type pushingWriter struct {
	o        *outlet
	left     int
	maxSlots int
	maxQueue int
}

func (w *pushingWriter) Write(p []byte) (int, error) {
	if len(p) == 1 && p[0] == '\n' {
		return 1, nil
	}
	w.o.mu.Lock()
	if n := len(w.o.frames); n > w.maxSlots {
		w.maxSlots = n
	}
	if q := w.o.queued(); q > w.maxQueue {
		w.maxQueue = q
	}
	w.o.mu.Unlock()
	if w.left > 0 {
		w.left--
		w.o.push([]byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`))
	}
	return len(p), nil
}

// TestOutletSlotsGrowWhileNeverEmpty: the outlet reuses its slice only once
// it is empty. A peer that keeps at least one frame waiting (a server
// flooding notifications to a client that reads at about the same pace:
// waitBelow holds the bytes under the limit, so the queue stays non-empty
// but short) makes frames[:head] — consumed, nil slots — grow by one per
// frame for as long as the flood lasts, and the array is never given back
// (frames[:0] keeps its capacity). Before, frames = frames[1:] kept only the
// waiting frames. Here one or two frames wait at any time (one while the
// other is being written), and 200,000 pass.
func TestOutletSlotsGrowWhileNeverEmpty(t *testing.T) {
	w := &pushingWriter{left: 200000}
	o := newOutlet(jsonrpc.NewWriter(w), nil, nil)
	w.o = o
	o.push([]byte(`{"jsonrpc":"2.0","method":"a"}`))
	o.push([]byte(`{"jsonrpc":"2.0","method":"b"}`))
	o.drain()
	if w.maxQueue > 2 {
		t.Fatalf("queue held %d frames; the test wants at most 2", w.maxQueue)
	}
	if w.maxSlots > 1024 {
		t.Fatalf("with at most %d frames waiting the outlet held %d slots (%d bytes of slice headers), and keeps cap %d after draining",
			w.maxQueue, w.maxSlots, w.maxSlots*24, cap(o.frames))
	}
}
