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
	lg      auditWriter
	id      pin.Identity
	log     *slog.Logger
	ch      chan audit.Event
	full    chan struct{} // the queue is half full: write now
	closing chan struct{} // closed by close: write now
	wg      sync.WaitGroup
	dropped atomic.Int64
	// required: the policy says an operation that cannot be audited does
	// not happen; broken is set once an event could not be written.
	required bool
	broken   atomic.Bool
	// writing is when the append in progress started (UnixNano), 0 when
	// none is: an append that hangs (a database that accepts connections
	// and never answers) is as good as a failed one for audit.required.
	writing atomic.Int64
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
	a := &auditSink{lg: lg, id: id, log: log, ch: make(chan audit.Event, auditQueue),
		full: make(chan struct{}, 1), closing: make(chan struct{}), required: p != nil && p.Audit().Required}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		// Gather events for a moment and write them in one go: one lock
		// and one head update for a whole batch keeps the log's cost off a
		// busy session. Closing the sink writes what is gathered.
		//
		// While it gathers it does not receive: a receive per event would
		// wake this goroutine once per event, which cost a call more than
		// the write itself. It sleeps until the gathering time is up, the
		// queue is half full (record says so) or the sink closes, then
		// takes what is queued.
		batch := make([]audit.Event, 0, maxAuditBatch)
		gather := time.NewTimer(auditGather)
		gather.Stop()
		for ev := range a.ch {
			batch = append(batch[:0], ev)
			if len(a.ch) < maxAuditBatch-1 { // else a whole batch is ready
				gather.Reset(auditGather)
				select {
				case <-gather.C:
				case <-a.full:
				case <-a.closing:
				}
				gather.Stop()
			}
		take:
			for len(batch) < maxAuditBatch {
				select {
				case ev, ok := <-a.ch:
					if !ok {
						break take
					}
					batch = append(batch, ev)
				default:
					break take
				}
			}
			a.writing.Store(time.Now().UnixNano())
			err := lg.AppendAll(batch)
			a.writing.Store(0)
			if err != nil {
				a.log.Error("audit log: events not written", "count", len(batch), "err", err)
				a.broken.Store(true)
			} else if a.export != nil {
				a.export.Kick()
			}
		}
	}()
	return a, nil
}

// auditStall is how long an append may take before audit.required
// counts the log as failing: far longer than an append to files or to a
// healthy database takes even on a loaded machine (a spurious refusal
// would be a call refused for nothing), far shorter than the database's
// own timeout (10 s of unaudited calls).
const auditStall = 500 * time.Millisecond

// stalled reports whether the append in progress has taken longer than
// auditStall.
func (a *auditSink) stalled() bool {
	t := a.writing.Load()
	return t != 0 && time.Since(time.Unix(0, t)) > auditStall
}

// record queues one event.
func (a *auditSink) record(ev audit.Event) {
	ev.Server, ev.Label = a.id.ID, a.id.Label
	if a.subject != "" && ev.Subject == "" {
		ev.Subject, ev.Issuer, ev.Client, ev.JTI = a.subject, a.issuer, a.client, a.jti
	}
	select {
	case a.ch <- ev:
		if len(a.ch) > cap(a.ch)/2 {
			select {
			case a.full <- struct{}{}:
			default:
			}
		}
	default:
		a.broken.Store(true)
		if a.dropped.Add(1) == 1 {
			a.log.Error("audit log: events are arriving faster than they can be written; dropping")
		}
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
	close(a.closing)
	close(a.ch)
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
