package httpgw

import (
	"sync"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/oauth"
)

// maxExchangeBytes bounds what may wait for one HTTP response: a client
// that does not read its stream loses it rather than growing the gateway.
const maxExchangeBytes = 64 << 20

// maxReplayBytes bounds the events one stream keeps for Last-Event-ID.
const maxReplayBytes = 4 << 20

// An exchange is one HTTP request waiting for frames: a POST waiting for
// its answer (and whatever the server sends before it), or a GET stream.
// The session pushes frames under its lock; the request's handler
// goroutine takes and writes them.
type exchange struct {
	key        string // the request id key it waits on ("" for GET)
	clientID   []byte // the client's own request id
	tokens     []string
	acceptJSON bool
	acceptSSE  bool
	initialize bool
	// listen marks a subscriptions/listen (2026-07-28): the only
	// exchange a notification tagged with a subscription id may reach.
	listen bool
	// filter, when set, rewrites the answer for the caller (auth.go).
	filter func([]byte) []byte
	// caller is the authenticated caller's key (oauth.Identity.Key), ""
	// without authentication: in the 2026-07-28 session every caller
	// shares, a caller's cancel reaches only its own requests.
	caller string
	// who is the authenticated caller (nil without authentication), and
	// audited its audit form, for the gate's events of this request.
	who     *oauth.Identity
	audited *gate.Caller
	// streamID names a legacy POST stream for Last-Event-ID; "" when the
	// stream cannot be resumed (2026-07-28 has no resumption).
	streamID string
	// traceparent and tracestate are the request's W3C trace headers, all
	// their values, for the session's telemetry (HeaderTracer).
	traceparent, tracestate []string
	// log holds the events written so far (the last maxReplayBytes of
	// them), for a client that resumes; base is the sequence number of
	// log[0] minus one.
	log      [][]byte
	logBytes int
	base     int

	mu       sync.Mutex
	wake     chan struct{}
	frames   [][]byte
	bytes    int
	final    bool // the answer is queued: write what is queued and end
	result   bool // the answer is a result (not an error)
	ended    bool // no more frames will come
	overflow bool
}

func newExchange(acceptJSON, acceptSSE bool) *exchange {
	return &exchange{acceptJSON: acceptJSON, acceptSSE: acceptSSE, wake: make(chan struct{}, 1)}
}

// push queues a frame that is not the answer.
func (e *exchange) push(frame []byte) { e.add(frame, false, false) }

// answer queues the answer; result says it is a result, not an error.
func (e *exchange) answer(frame []byte, result bool) {
	if e.filter != nil {
		frame = e.filter(frame)
	}
	e.add(frame, true, result)
}

func (e *exchange) add(frame []byte, final, result bool) {
	e.mu.Lock()
	if !e.ended && !e.final {
		if e.bytes+len(frame) > maxExchangeBytes {
			e.overflow = true
		} else {
			e.frames = append(e.frames, frame)
			e.bytes += len(frame)
			e.final, e.result = final, result
		}
	}
	e.mu.Unlock()
	e.signal()
}

// end says no more frames will come (a GET stream whose session ended).
func (e *exchange) end() {
	e.mu.Lock()
	e.ended = true
	e.mu.Unlock()
	e.signal()
}

func (e *exchange) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// take returns what is queued.
func (e *exchange) take() (frames [][]byte, final, result, ended, overflow bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	frames, e.frames, e.bytes = e.frames, nil, 0
	return frames, e.final, e.result, e.ended, e.overflow
}

// record appends a written event to the replay log and returns its
// sequence number. Only the handler goroutine that owns the stream calls
// it.
func (e *exchange) record(frame []byte) int {
	e.log = append(e.log, frame)
	e.logBytes += len(frame)
	for e.logBytes > maxReplayBytes && len(e.log) > 1 {
		e.logBytes -= len(e.log[0])
		e.log[0] = nil
		e.log = e.log[1:]
		e.base++
	}
	return e.base + len(e.log)
}

// since returns the logged events after sequence number n; ok is false
// when they are no longer all there.
func (e *exchange) since(n int) ([][]byte, bool) {
	if n < e.base || n > e.base+len(e.log) {
		return nil, false
	}
	return e.log[n-e.base:], true
}
