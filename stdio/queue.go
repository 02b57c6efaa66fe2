package stdio

import "sync"

// A queue holds frames for one writer goroutine. Push never blocks: the
// run loop bounds the queue by not reading from the other side while the
// queue is over its soft limit, and every message the gate handles adds a
// bounded burst.
type queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	frames [][]byte
	bytes  int
	closed bool
	kick   chan<- struct{}
}

func newQueue(kick chan<- struct{}) *queue {
	q := &queue{kick: kick}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) push(f []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.frames = append(q.frames, f)
	q.bytes += len(f)
	q.cond.Signal()
}

// size returns the number of queued bytes and frames.
func (q *queue) size() (bytes, frames int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes, len(q.frames)
}

// close lets the writer finish what is queued, then stop.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// pop waits for a frame; ok is false once the queue is closed and empty.
func (q *queue) pop() (f []byte, ok bool) {
	q.mu.Lock()
	for len(q.frames) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.frames) == 0 {
		q.mu.Unlock()
		return nil, false
	}
	f = q.frames[0]
	q.frames[0] = nil
	q.frames = q.frames[1:]
	q.bytes -= len(f)
	q.mu.Unlock()
	select {
	case q.kick <- struct{}{}:
	default:
	}
	return f, true
}
