package cli

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/policy"
	"github.com/mcpseal/mcpseal/siem"
)

// auditQueue bounds the events waiting to be written: an append takes tens
// of microseconds (a lock and a write), which is not a cost a call should
// wait for. Beyond it events are dropped, counted and reported.
const auditQueue = 4096

// maxAuditBatch bounds one batch written under one lock, and auditGather
// how long an event may wait for others to join it (what a crash of the
// machine, not of mcpseal, could lose).
const (
	maxAuditBatch = 256
	auditGather   = 50 * time.Millisecond
)

// auditSink writes the gate's decisions to the audit log off the gate's
// lock, in order.
type auditSink struct {
	lg  auditWriter
	id  pin.Identity
	log *slog.Logger
	// mu guards queue and closed. The queue grows with what is waiting
	// (at most auditQueue events): a channel of that capacity would keep
	// 1.4 MB of event slots resident for the whole session, most of a
	// quiet session's heap.
	mu      sync.Mutex
	queue   []audit.Event
	closed  bool
	wake    chan struct{} // an event was queued: the writer starts gathering
	full    chan struct{} // the queue is half full: write now
	closing chan struct{} // closed by close: write now
	wg      sync.WaitGroup
	dropped atomic.Int64
	// required: the policy says an operation that cannot be audited does
	// not happen; broken is set once an event could not be written.
	required bool
	broken   atomic.Bool
	// queuedSince is when the oldest queued event was queued, writing
	// when the oldest event of the batch being written was (UnixNano, 0
	// when there is none): an event that waits too long to be written (a
	// database that accepts connections and never answers, a writer that
	// never gets to run) is as good as lost for audit.required.
	queuedSince, writing atomic.Int64
	// subject, client and jti name the caller of a team gateway session.
	subject, issuer, client, jti string
	// export, when set, ships the log: it is told of each batch written,
	// and under required its full spool refuses calls.
	export *siem.Exporter
}

// auditWriter is where a sink writes: the files under $MCPSEAL_HOME/audit
// (audit.Log) or the state database's log (pgstate.AuditLog).
type auditWriter interface {
	AppendAll([]audit.Event) error
	Close() error
}

// openAudit opens the audit log: the state database's when state (or
// $MCPSEAL_STATE) names one, else $MCPSEAL_HOME/audit with the policy's
// settings (p may be nil). The audit log records decisions, never
// content.
func openAudit(e *env, p *policy.Policy, id pin.Identity, log *slog.Logger, state string) (*auditSink, error) {
	lg, err := openAuditWriter(e, p, log, state)
	if err != nil {
		return nil, err
	}
	a := &auditSink{lg: lg, id: id, log: log, wake: make(chan struct{}, 1),
		full: make(chan struct{}, 1), closing: make(chan struct{}), required: p != nil && p.Audit().Required}
	a.wg.Add(1)
	go a.write()
	return a, nil
}

// write is the sink's writer. It gathers events for a moment and writes
// them in one go: one lock and one head update for a whole batch keeps the
// log's cost off a busy session. Closing the sink writes what is gathered.
//
// While it gathers it is not woken per event: a wake-up per event cost a
// call more than the write itself. It sleeps until the gathering time is
// up, the queue is half full (record says so) or the sink closes, then
// takes everything queued, swapping buffers so that record never waits
// for a write.
func (a *auditSink) write() {
	defer a.wg.Done()
	gather := time.NewTimer(auditGather)
	gather.Stop()
	var batch []audit.Event
	for {
		select {
		case <-a.wake:
		case <-a.closing:
		}
		if a.queued() < maxAuditBatch {
			gather.Reset(auditGather)
			select {
			case <-gather.C:
			case <-a.full:
			case <-a.closing:
			}
			gather.Stop()
		}
		a.mu.Lock()
		batch, a.queue = a.queue, batch[:0]
		a.writing.Store(a.queuedSince.Swap(0))
		closed := a.closed
		a.mu.Unlock()
		for rest := batch; len(rest) > 0; {
			n := min(len(rest), maxAuditBatch)
			a.append(rest[:n])
			rest = rest[n:]
		}
		a.writing.Store(0)
		clear(batch) // no event's strings kept alive by a spare buffer
		if cap(batch) > 4*maxAuditBatch {
			batch = nil // a burst's buffer is not kept for a quiet session
		}
		if closed {
			return
		}
	}
}

// append writes one batch.
func (a *auditSink) append(batch []audit.Event) {
	err := a.lg.AppendAll(batch)
	if err != nil {
		a.log.Error("audit log: events not written", "count", len(batch), "err", err)
		a.broken.Store(true)
	} else if a.export != nil {
		a.export.Kick()
	}
}

// queued is how many events wait to be written.
func (a *auditSink) queued() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.queue)
}

// auditStall is how long an event may wait to be written, besides the
// time its batch gathers, before audit.required counts the log as failing:
// far longer than an append to files or to a healthy database takes even
// on a loaded machine (a spurious refusal would be a call refused for
// nothing: 500 ms was seen to pass under a load average of 18 on two
// cores), far shorter than the database's own timeout (10 s of unaudited
// calls).
const auditStall = 2 * time.Second

// stalled reports whether an event has waited to be written for longer
// than auditGather and auditStall: the clock starts when the event is
// queued, not when its append starts, so a writer that is slow to run
// counts as well as an append that hangs.
func (a *auditSink) stalled() bool {
	now := time.Now()
	for _, t := range [2]int64{a.writing.Load(), a.queuedSince.Load()} {
		if t != 0 && now.Sub(time.Unix(0, t)) > auditGather+auditStall {
			return true
		}
	}
	return false
}

// record queues one event.
func (a *auditSink) record(ev audit.Event) {
	ev.Server, ev.Label = a.id.ID, a.id.Label
	if a.subject != "" {
		ev.Subject, ev.Issuer, ev.Client, ev.JTI = a.subject, a.issuer, a.client, a.jti
	}
	a.mu.Lock()
	n := len(a.queue)
	ok := n < auditQueue && !a.closed
	if ok {
		if n == 0 {
			a.queuedSince.Store(time.Now().UnixNano())
		}
		a.queue = append(a.queue, ev)
		n++
	}
	a.mu.Unlock()
	if !ok {
		a.broken.Store(true)
		if a.dropped.Add(1) == 1 {
			a.log.Error("audit log: events are arriving faster than they can be written; dropping")
		}
		return
	}
	if n == 1 {
		poke(a.wake)
	}
	if n > auditQueue/2 {
		poke(a.full)
	}
}

// poke wakes whoever waits on c without waiting itself.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// hooks refuse every call once an event could not be written, when the
// policy requires the audit log: an unaudited call does not happen. Events
// are written in batches, so the refusal starts with the first call after
// the failure is known (within auditGather of it).
func (a *auditSink) hooks() gate.Hooks {
	h := gate.Hooks{Event: a.gateEvent}
	if a.required {
		h.Call = func(gate.CallInfo) gate.Verdict {
			if !a.broken.Load() && !a.stalled() {
				if a.export == nil || !a.export.Full() {
					return gate.Verdict{Kind: gate.Allow}
				}
				return gate.Verdict{Kind: gate.Refuse, Refusal: gate.Refusal{Code: codePolicy,
					Message: "mcpseal: the audit stream's spool is full and the host policy requires the audit log; the call was not forwarded",
					Reason:  "audit-spool-full"}}
			}
			return gate.Verdict{Kind: gate.Refuse, Refusal: gate.Refusal{Code: codePolicy,
				Message: "mcpseal: the audit log cannot be written and the host policy requires it; the call was not forwarded",
				Reason:  "audit-unavailable"}}
		}
	}
	return h
}

// gateEvent maps a gate event to an audit event.
func (a *auditSink) gateEvent(e gate.Event) {
	ev := audit.Event{Tool: e.Name, Digest: e.Digest, Code: e.Code, Count: int64(e.Count), Bytes: int64(e.Size)}
	switch e.Op {
	case "connect":
		ev.Op, ev.Outcome = audit.OpList, audit.Allowed
		if e.Outcome == "refused" {
			ev.Op, ev.Outcome = audit.OpConnect, audit.Refused
		}
	case "list":
		ev.Op, ev.Outcome = audit.OpList, audit.Allowed
	case "withhold":
		ev.Op, ev.Outcome = audit.OpWithhold, audit.Withheld
		if e.Name == "" && e.Code == "instructions" {
			ev.Tool = ""
		}
	case "call":
		ev.Op, ev.Outcome = audit.OpCall, audit.Allowed
		if e.Outcome == "refused" {
			ev.Outcome = audit.Refused
		}
	case "result":
		ev.Op, ev.Outcome = audit.OpCall, audit.Allowed
		if e.Outcome == "withheld" {
			ev.Op, ev.Outcome = audit.OpWithhold, audit.Withheld
		}
	case "confirm":
		ev.Op = audit.OpConfirm
		switch e.Outcome {
		case "asked":
			ev.Outcome = audit.Asked
		case "accepted":
			ev.Outcome = audit.Accepted
		default:
			ev.Outcome, ev.Code = audit.Declined, "confirm-"+e.Outcome
		}
	case "drift":
		ev.Op, ev.Outcome = audit.OpDrift, audit.Refused
		if e.Outcome == "forwarded" {
			ev.Outcome = audit.Warned
		}
	default:
		return
	}
	if ev.Digest != "" && len(ev.Digest) != 64 {
		ev.Digest = ""
	}
	a.record(ev)
}

// close writes what is queued and closes the log.
func (a *auditSink) close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	close(a.closing)
	a.wg.Wait()
	if n := a.dropped.Load(); n > 0 {
		a.log.Error("audit log: events dropped", "count", n)
	}
	return a.lg.Close()
}

func openAuditWriter(e *env, p *policy.Policy, log *slog.Logger, state string) (auditWriter, error) {
	url, err := stateURL(e, state)
	if err != nil {
		return nil, err
	}
	if url != "" {
		db, err := sharedStateDB(url, log)
		if err != nil {
			return nil, err
		}
		return db.Audit(), nil
	}
	home, err := pin.DefaultHome(e.getenv)
	if err != nil {
		return nil, err
	}
	o := audit.Options{}
	if p != nil {
		o.MaxFileBytes, o.MaxFiles = p.Audit().MaxFileBytes, p.Audit().MaxFiles
	}
	return audit.Open(home, o)
}
