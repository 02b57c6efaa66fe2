package cli

import (
	"log/slog"
	"strings"
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
	held    int // events the writer took and has not written yet
	closed  bool
	wake    chan struct{} // an event was queued: the writer starts gathering
	full    chan struct{} // the queue is half full: write now
	closing chan struct{} // closed by close: write now
	wg      sync.WaitGroup
	dropped atomic.Int64
	// noted is how many of the dropped events a gap event in the log
	// already counts (the writer's own).
	noted int64
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
	return newAuditSink(lg, id, log, p != nil && p.Audit().Required), nil
}

// newAuditSink returns a sink writing server id's events to lg, its writer
// started.
func newAuditSink(lg auditWriter, id pin.Identity, log *slog.Logger, required bool) *auditSink {
	a := &auditSink{lg: lg, id: id, log: log, wake: make(chan struct{}, 1),
		full: make(chan struct{}, 1), closing: make(chan struct{}), required: required}
	a.wg.Add(1)
	go a.write()
	return a
}

// Retries of a batch the log did not take (a database gone away): the
// wait doubles from auditRetryMin to auditRetryMax, for as long as the
// sink lives; once it closes, a batch that fails auditCloseTries times is
// given up (and counted as dropped): exit is not held up for long by a
// database that is gone.
const (
	auditRetryMin   = 100 * time.Millisecond
	auditRetryMax   = 2 * time.Second
	auditCloseTries = 1
)

// write is the sink's writer. It gathers events for a moment and writes
// them in one go: one lock and one head update for a whole batch keeps the
// log's cost off a busy session. Closing the sink writes what is gathered.
//
// While it gathers it is not woken per event: a wake-up per event cost a
// call more than the write itself. It sleeps until the gathering time is
// up, the queue is half full (record says so) or the sink closes, then
// takes everything queued, swapping buffers so that record never waits
// for a write.
//
// A batch the log refuses is kept and written again, first, before any
// later event, so the log loses nothing and keeps the order while the
// queue holds (the events held count against auditQueue; beyond it record
// drops and counts). Meanwhile audit.required refuses calls; the first
// append that succeeds again clears that. A retried append whose first try
// committed after all (its answer lost) writes its events twice: more,
// never fewer.
func (a *auditSink) write() {
	defer a.wg.Done()
	gather := time.NewTimer(auditGather)
	gather.Stop()
	var (
		batch, spare []audit.Event // batch: taken, not yet written
		retry        time.Duration
		tries        int
	)
	for {
		if len(batch) == 0 {
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
		} else {
			// The last append failed: wait, then write the same events
			// with what is queued behind them.
			gather.Reset(retry)
			select {
			case <-gather.C:
			case <-a.closing:
			}
			gather.Stop()
		}
		a.mu.Lock()
		if len(batch) == 0 {
			batch, a.queue = a.queue, spare[:0]
			a.writing.Store(a.queuedSince.Swap(0))
		} else {
			batch = append(batch, a.queue...)
			clear(a.queue)
			a.queue = a.queue[:0]
			if a.writing.Load() == 0 {
				a.writing.Store(a.queuedSince.Load())
			}
			a.queuedSince.Store(0)
		}
		a.held = len(batch)
		closed := a.closed
		a.mu.Unlock()
		written := 0
		err := a.noteDropped()
		for err == nil && written < len(batch) {
			n := min(len(batch)-written, maxAuditBatch)
			if err = a.lg.AppendAll(batch[written : written+n]); err != nil {
				break
			}
			written += n
			a.export.Appended(n) // a nil Exporter takes it too
		}
		if err != nil {
			if retry == 0 {
				a.log.Error("audit log: events not written; trying again", "count", len(batch)-written, "err", err)
			}
			a.broken.Store(true)
			retry = min(max(2*retry, auditRetryMin), auditRetryMax)
			rest := copy(batch, batch[written:])
			clear(batch[rest:])
			batch = batch[:rest]
			if closed {
				if tries++; tries >= auditCloseTries {
					a.dropped.Add(int64(len(batch)))
					a.log.Error("audit log: events given up at exit", "count", len(batch))
					clear(batch)
					batch = batch[:0]
				}
			}
		} else {
			if retry != 0 {
				a.log.Info("audit log: written again")
			}
			retry, tries = 0, 0
			if written > 0 && a.dropped.Load() == a.noted {
				a.broken.Store(false)
			}
			clear(batch) // no event's strings kept alive by a spare buffer
			batch = batch[:0]
		}
		a.mu.Lock()
		a.held = len(batch)
		if len(batch) == 0 {
			a.writing.Store(0)
		}
		a.mu.Unlock()
		spare = batch[:0]
		if cap(spare) > 4*maxAuditBatch {
			spare = nil // a burst's buffer is not kept for a quiet session
		}
		if len(batch) == 0 {
			batch = nil
			if closed && a.queued() == 0 {
				return
			}
		}
	}
}

// noteDropped writes a gap event for the events dropped since the last
// one, before any later event: the log itself says how many are missing.
// Until it is written the sink stays broken, so audit.required cannot
// allow calls again over a silent hole.
func (a *auditSink) noteDropped() error {
	n := a.dropped.Load() - a.noted
	if n <= 0 {
		return nil
	}
	ev := audit.Event{Op: audit.OpGap, Outcome: audit.Noted, Code: "events-dropped", Count: n, Server: a.id.ID, Label: a.id.Label}
	if err := a.lg.AppendAll([]audit.Event{ev}); err != nil {
		return err
	}
	a.noted += n
	return nil
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
	if a.subject != "" && ev.Subject == "" {
		ev.Subject, ev.Issuer, ev.Client, ev.JTI = a.subject, a.issuer, a.client, a.jti
	}
	a.mu.Lock()
	n := len(a.queue)
	ok := n+a.held < auditQueue && !a.closed
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
	if c := e.Caller; c != nil {
		// The caller of this request in a session several callers share
		// (the team gateway's 2026-07-28 session).
		ev.Subject, ev.Issuer, ev.Client, ev.JTI = c.Subject, c.Issuer, c.ClientID, strings.TrimPrefix(c.JTIDigest, "sha256:")
	}
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
