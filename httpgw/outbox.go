package httpgw

import (
	"bytes"
	"io"
	"log/slog"
	"sync"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// An outbox writes frames to the server, in the order they were queued,
// and never while the session's lock is held.
//
// Frames the gate produces while handling a client's request are queued
// with hold, under the session's lock, and written by that request's own
// handler goroutine once the lock is released (flush), as a bare bridge
// writes: no hand-off to another goroutine on the way to the server. The
// handler never waits on the server for it: flush writes only what the
// server's input takes at once (a pipe's nonblocking write, tryWrite), and
// only when nothing else is being written; whatever is left, the rest of
// a frame included, is written by the outbox's goroutine, which also
// writes every frame queued with push (those of steps the server's own
// messages and the timers drive: that goroutine blocking on a full pipe
// is what keeps the server's reader from ever waiting on the server's
// input). One writer at a time (writing), so frames are never
// interleaved, and the byte count bounds what may wait (full).
type outbox struct {
	mu     sync.Mutex
	cond   *sync.Cond
	frames [][]byte
	bytes  int
	// rest is the end of a frame, its newline included, that a flush
	// wrote only part of: the next bytes the server must get.
	rest    []byte
	writing bool // a goroutine is writing; no other may start
	closed  bool
	failed  bool
	w       *jsonrpc.Writer
	raw     io.Writer // what w writes to, for rest
	// try writes what the server's input takes without waiting, nil when
	// it cannot (not a nonblocking pipe): then the goroutine writes all.
	try func([]byte) (int, error)
	buf []byte // flush's frame and newline, reused
	c   io.Closer
	log *slog.Logger
}

func newOutbox(w io.WriteCloser, log *slog.Logger) *outbox {
	o := &outbox{w: jsonrpc.NewWriter(w), raw: w, try: tryWriter(w), c: w, log: log}
	o.cond = sync.NewCond(&o.mu)
	return o
}

// push queues a frame for the outbox's goroutine.
func (o *outbox) push(f []byte) {
	o.mu.Lock()
	if o.queue(f) {
		o.cond.Signal()
	}
	o.mu.Unlock()
}

// hold queues a frame without waking the outbox's goroutine: the caller
// must call flush once it has released the session's lock.
func (o *outbox) hold(f []byte) {
	o.mu.Lock()
	o.queue(f)
	o.mu.Unlock()
}

func (o *outbox) queue(f []byte) bool {
	if o.closed || o.failed {
		return false
	}
	o.frames = append(o.frames, f)
	o.bytes += len(f)
	return true
}

// keepFlushBuf is the largest buffer flush keeps between frames.
const keepFlushBuf = 64 << 10

// flush writes what is queued, as far as the server's input takes it at
// once, on the calling goroutine, and leaves the rest to the outbox's
// goroutine. It never blocks on the server.
func (o *outbox) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.frames) == 0 {
		return
	}
	if o.writing || o.rest != nil || o.try == nil || o.closed || o.failed {
		o.cond.Signal() // the goroutine writes them, in turn
		return
	}
	o.writing = true
	for n := len(o.frames); n > 0 && !o.failed; n-- {
		f := o.frames[0]
		if bytes.IndexByte(f, '\n') >= 0 {
			break // the goroutine's Writer refuses it, and fails the outbox
		}
		o.frames[0] = nil
		o.frames = o.frames[1:]
		o.buf = append(append(o.buf[:0], f...), '\n')
		o.mu.Unlock()
		k, err := o.try(o.buf)
		o.mu.Lock()
		o.bytes -= len(f)
		if err != nil {
			o.log.Warn("writing to the server failed", "err", err)
			o.failed = true
			o.frames, o.bytes = nil, 0
			break
		}
		if k < len(o.buf) {
			o.rest = append([]byte(nil), o.buf[k:]...)
			o.bytes += len(o.rest)
			break
		}
	}
	if cap(o.buf) > keepFlushBuf {
		o.buf = nil
	}
	o.writing = false
	if len(o.frames) > 0 || o.rest != nil || o.failed || o.closed {
		o.cond.Signal()
	}
}

// full reports whether the server is not keeping up.
func (o *outbox) full() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bytes > softInbox
}

// close lets the outbox write what is queued, then close the server's
// stdin.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.cond.Signal()
	o.mu.Unlock()
}

// run is the outbox's goroutine: it writes what no flush wrote, then
// closes the server's stdin once the outbox is closed (or failed).
func (o *outbox) run() {
	o.mu.Lock()
	for {
		for o.writing || !o.failed && !o.closed && len(o.frames) == 0 && o.rest == nil {
			o.cond.Wait()
		}
		if o.failed || len(o.frames) == 0 && o.rest == nil {
			break // failed, or closed and drained
		}
		o.writing = true
		var err error
		if rest := o.rest; rest != nil {
			o.rest = nil
			o.mu.Unlock()
			_, err = o.raw.Write(rest)
			o.mu.Lock()
			o.bytes -= len(rest)
		} else {
			f := o.frames[0]
			o.frames[0] = nil
			o.frames = o.frames[1:]
			o.mu.Unlock()
			err = o.w.Write(f)
			o.mu.Lock()
			o.bytes -= len(f)
		}
		o.writing = false
		if err != nil {
			o.log.Warn("writing to the server failed", "err", err)
			o.failed = true
			o.frames, o.bytes = nil, 0
			break
		}
	}
	o.mu.Unlock()
	_ = o.c.Close()
}
