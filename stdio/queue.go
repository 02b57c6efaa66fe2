package stdio

import (
	"sync"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// An outlet writes frames to one peer, in the order they were pushed.
//
// Frames are pushed under the gate's lock, so their order is the gate's.
// Writing happens outside every lock, by whichever goroutine drains: the
// reader goroutine of the other peer drains directly (a message read from
// the client is written to the server by the same goroutine, with no
// hand-off), while frames pushed by the peer's own reader are written by
// the outlet's goroutine. A reader therefore never blocks on a write to its
// own peer — the one wait that could deadlock two peers that each stop
// reading while their writes are blocked.
type outlet struct {
	mu      sync.Mutex
	cond    *sync.Cond
	frames  [][]byte // frames[head:] wait; the slice is reused once empty
	head    int
	bytes   int
	writing bool // a goroutine is draining
	closed  bool // no more frames; finish once drained
	waiting int  // goroutines in waitBelow
	idle    bool // the outlet's goroutine waits for work
	err     error
	w       *jsonrpc.Writer
	// onFail is called once, outside the lock, when a write fails.
	onFail func(error)
	// finish is called once when the outlet is closed and drained.
	finish func()
}

func newOutlet(w *jsonrpc.Writer, onFail func(error), finish func()) *outlet {
	o := &outlet{w: w, onFail: onFail, finish: finish}
	o.cond = sync.NewCond(&o.mu)
	return o
}

// compact reuses the queue's array once it is empty, and moves the frames
// still waiting to its front once they are the lesser half of it, so that
// a queue that never empties (a flood read at the pace it comes) does not
// grow without end; a large empty array is let go.
func (o *outlet) compact() {
	switch {
	case o.head == len(o.frames) && cap(o.frames) > maxIdleSlots:
		o.frames, o.head = nil, 0
	case o.head == len(o.frames):
		o.frames, o.head = o.frames[:0], 0
	case o.head >= 64 && 2*o.head >= len(o.frames):
		n := copy(o.frames, o.frames[o.head:])
		clear(o.frames[n:])
		o.frames, o.head = o.frames[:n], 0
	}
}

// maxIdleSlots is the largest queue array an empty outlet keeps.
const maxIdleSlots = 1024

// queued is the number of frames waiting (under o.mu).
func (o *outlet) queued() int { return len(o.frames) - o.head }

// push queues a frame; it never blocks on I/O.
func (o *outlet) push(f []byte) {
	o.mu.Lock()
	if !o.closed && o.err == nil {
		o.frames = append(o.frames, f)
		o.bytes += len(f)
	}
	o.mu.Unlock()
}

// drain writes queued frames on the calling goroutine, unless another
// goroutine is already draining (it will write them).
func (o *outlet) drain() {
	o.mu.Lock()
	o.drainLocked()
	o.mu.Unlock()
}

func (o *outlet) drainLocked() {
	if o.writing {
		return
	}
	o.writing = true
	var failed error
	for o.queued() > 0 && o.err == nil {
		f := o.frames[o.head]
		o.frames[o.head] = nil
		o.head++
		o.compact()
		o.mu.Unlock()
		err := o.w.Write(f)
		o.mu.Lock()
		o.bytes -= len(f)
		if err != nil {
			o.err, failed = err, err
			o.frames, o.head, o.bytes = nil, 0, 0
		}
		if o.waiting > 0 {
			o.cond.Broadcast() // a reader waits for the queue to shrink
		}
	}
	o.writing = false
	// Wake only who has something to do: a reader held back by the
	// queue, or the outlet's goroutine when there is more to write or the
	// outlet is closing. Waking it for nothing costs a thread switch on
	// every frame.
	if o.waiting > 0 || o.idle && (o.queued() > 0 || o.closed || o.err != nil) {
		o.cond.Broadcast()
	}
	if failed != nil && o.onFail != nil {
		o.mu.Unlock()
		o.onFail(failed)
		o.mu.Lock()
	}
}

// wake asks the outlet's goroutine to drain, when there is something to
// write and nobody writing (waking it for nothing costs a thread switch on
// every message).
func (o *outlet) wake() {
	o.mu.Lock()
	if o.queued() > 0 && !o.writing {
		o.cond.Broadcast()
	}
	o.mu.Unlock()
}

// waitBelow blocks while more than limit bytes wait and the outlet can
// still write.
func (o *outlet) waitBelow(limit int) {
	o.mu.Lock()
	for o.bytes > limit && o.err == nil && !o.closed {
		o.waiting++
		o.cond.Wait()
		o.waiting--
	}
	o.mu.Unlock()
}

// close lets the outlet finish what is queued, then call finish.
func (o *outlet) close() {
	o.mu.Lock()
	o.closed = true
	o.cond.Broadcast()
	o.mu.Unlock()
}

// run is the outlet's goroutine: it drains what nobody else drains and
// finishes the outlet once closed.
func (o *outlet) run() {
	o.mu.Lock()
	for {
		for (o.queued() == 0 || o.writing || o.err != nil) && !(o.closed && !o.writing) {
			o.idle = true
			o.cond.Wait()
			o.idle = false
		}
		if o.queued() > 0 && o.err == nil {
			o.drainLocked()
			continue
		}
		if o.closed && !o.writing {
			break
		}
	}
	o.mu.Unlock()
	if o.finish != nil {
		o.finish()
	}
}
