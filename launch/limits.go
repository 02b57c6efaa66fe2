package launch

import (
	"bytes"
	"io"
	"sync"
	"time"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// maxTrackedFrame bounds the frame the limiter buffers to find a request
// or response id: the proxy's own default frame limit. A longer frame is
// not tracked (the proxy drops it anyway).
const maxTrackedFrame = jsonrpc.DefaultMaxFrame

// maxOutstanding bounds the requests tracked at once; a client that
// sends more without waiting has the oldest forgotten (and so not timed).
const maxOutstanding = 4096

// limiter enforces the limits that are about the conversation, not the
// process: stdout and stderr bytes, the time to the first answer, and
// each request's time. It kills the server when one is passed.
type limiter struct {
	lim    Limits
	kill   func()
	events func(Event)

	mu          sync.Mutex
	firstSent   time.Time // when the first frame went to the server
	answered    bool      // the server has written a frame
	outstanding map[string]time.Time
	order       []string
	tripped     string // the limit that killed the server
	stdoutN     int64
	stderrN     int64
	stderrFull  bool

	stop chan struct{}
	once sync.Once
}

func newLimiter(lim Limits, kill func(), events func(Event)) *limiter {
	l := &limiter{lim: lim, kill: kill, events: events, outstanding: map[string]time.Time{}, stop: make(chan struct{})}
	go l.watch()
	return l
}

// close stops the watchdog.
func (l *limiter) close() { l.once.Do(func() { close(l.stop) }) }

// trip records the limit passed, reports it and kills the server, once.
func (l *limiter) trip(name string, value int64, action string) {
	l.mu.Lock()
	first := l.tripped == ""
	if first {
		l.tripped = name
	}
	l.mu.Unlock()
	if !first {
		return
	}
	if l.events != nil {
		l.events(Event{Kind: EventLimit, Limit: name, Value: value, Action: action, Count: 1})
	}
	l.kill()
}

// watch checks the deadlines. Why 100 ms: a limit is enforced within a
// tenth of a second of passing, at negligible cost.
func (l *limiter) watch() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case now := <-t.C:
			l.mu.Lock()
			startup := !l.answered && !l.firstSent.IsZero() && now.Sub(l.firstSent) > ms(l.lim.StartupMS)
			request := false
			for _, k := range l.order {
				if sent, ok := l.outstanding[k]; ok {
					request = now.Sub(sent) > ms(l.lim.RequestMS)
					break
				}
			}
			l.mu.Unlock()
			switch {
			case startup:
				l.trip("startup_ms", l.lim.StartupMS, "killed: no answer in time")
			case request:
				l.trip("request_ms", l.lim.RequestMS, "killed: a request was not answered in time")
			}
		}
	}
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// sent notes a frame written to the server.
func (l *limiter) sent(frame []byte) {
	m, err := jsonrpc.Peek(frame)
	if err != nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.firstSent.IsZero() {
		l.firstSent = now
	}
	if m.Kind != jsonrpc.Batch {
		l.sentOne(m, now)
		return
	}
	elems, err := jsonrpc.Elements(frame)
	if err != nil {
		return
	}
	for _, e := range elems {
		if em, err := jsonrpc.Peek(e); err == nil {
			l.sentOne(em, now)
		}
	}
}

func (l *limiter) sentOne(m jsonrpc.Message, now time.Time) {
	switch {
	case m.Kind == jsonrpc.Request:
		k := jsonrpc.IDKey(m.ID)
		if _, dup := l.outstanding[k]; !dup {
			l.outstanding[k] = now
			l.order = append(l.order, k)
		}
		l.compact()
	case m.Kind == jsonrpc.Notification && m.Method == "notifications/cancelled":
		// A cancelled request need not be answered (MCP cancellation).
		if id := memberValue(m.Params, "requestId"); id != nil {
			delete(l.outstanding, jsonrpc.IDKey(id))
		}
	}
}

// compact drops answered ids from the order and bounds what is tracked.
func (l *limiter) compact() {
	if len(l.order) < 2*maxOutstanding && len(l.order) <= 2*len(l.outstanding) {
		return
	}
	kept := l.order[:0]
	for _, k := range l.order {
		if _, ok := l.outstanding[k]; ok {
			kept = append(kept, k)
		}
	}
	for len(kept) > maxOutstanding {
		delete(l.outstanding, kept[0])
		kept = kept[1:]
	}
	l.order = append([]string(nil), kept...)
}

// received notes a frame from the server.
func (l *limiter) received(frame []byte) {
	m, err := jsonrpc.Peek(frame)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.answered = true
	if err == nil && m.Kind == jsonrpc.Response {
		delete(l.outstanding, jsonrpc.IDKey(m.ID))
	}
	if err == nil && m.Kind == jsonrpc.Batch {
		if elems, err := jsonrpc.Elements(frame); err == nil {
			for _, e := range elems {
				if em, err := jsonrpc.Peek(e); err == nil && em.Kind == jsonrpc.Response {
					delete(l.outstanding, jsonrpc.IDKey(em.ID))
				}
			}
		}
	}
}

func memberValue(obj []byte, name string) []byte {
	members, err := jsonrpc.Members(obj)
	if err != nil {
		return nil
	}
	for _, mb := range members {
		if mb.Key == name {
			return mb.Value
		}
	}
	return nil
}

// framer splits a byte stream into lines for the limiter, buffering at
// most maxTrackedFrame bytes of one line.
type framer struct {
	buf  []byte
	skip bool // the current line is too long to track
	emit func([]byte)
}

func (f *framer) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !f.skip {
			if len(f.buf)+len(chunk) > maxTrackedFrame {
				f.skip, f.buf = true, f.buf[:0]
			} else {
				f.buf = append(f.buf, chunk...)
			}
		}
		if i < 0 {
			return
		}
		if !f.skip && len(bytes.TrimSpace(f.buf)) > 0 {
			f.emit(f.buf)
		}
		f.buf, f.skip = f.buf[:0], false
		p = p[i+1:]
	}
}

// stdinWriter passes frames to the server and notes requests.
type stdinWriter struct {
	w  io.WriteCloser
	fr framer
	mu sync.Mutex
}

func (s *stdinWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.mu.Lock()
	s.fr.write(p[:n])
	s.mu.Unlock()
	return n, err
}

func (s *stdinWriter) Close() error { return s.w.Close() }

// stdoutReader counts the server's output, notes answers, and ends the
// server past stdout_bytes.
type stdoutReader struct {
	r   io.Reader
	fr  framer
	lim *limiter
}

func (s *stdoutReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	l := s.lim
	l.mu.Lock()
	l.stdoutN += int64(n)
	over := l.stdoutN > l.lim.StdoutBytes
	l.mu.Unlock()
	if over {
		l.trip("stdout_bytes", l.lim.StdoutBytes, "killed: too much output")
		return 0, io.EOF
	}
	s.fr.write(p[:n])
	return n, err
}

// stderrReader passes at most stderr_bytes through and discards the
// rest, reading on so that the server never blocks on a full pipe.
type stderrReader struct {
	r   io.Reader
	lim *limiter
}

func (s *stderrReader) Read(p []byte) (int, error) {
	l := s.lim
	for {
		n, err := s.r.Read(p)
		l.mu.Lock()
		room := l.lim.StderrBytes - l.stderrN
		pass := int64(n)
		if pass > room {
			pass = max(room, 0)
		}
		l.stderrN += pass
		first := pass < int64(n) && !l.stderrFull
		if first {
			l.stderrFull = true
		}
		l.mu.Unlock()
		if first && l.events != nil {
			l.events(Event{Kind: EventLimit, Limit: "stderr_bytes", Value: l.lim.StderrBytes, Action: "discarded: the rest of stderr", Count: 1})
		}
		if pass > 0 || err != nil {
			return int(pass), err
		}
	}
}
