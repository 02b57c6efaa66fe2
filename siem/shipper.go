package siem

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpseal/mcpseal/audit"
)

// Shipping bounds and pace.
const (
	// maxBatch bounds the events of one batch (and one syslog write).
	maxBatch       = 256
	cursorFormat   = "mcpseal-audit-cursor v1 %020d %s\n"
	maxCursorBytes = 256
	// maxFailedSends is how many batches in a row a sink may refuse
	// before this process gives its role up: the fault may be this
	// process's path to the sink (a partition, a firewall on its host),
	// and another process that can reach it should take over rather than
	// wait for a lease this one keeps renewing.
	maxFailedSends = 3
)

// The pace (variables for the tests): how often a sink's shipper looks for
// new events and every process checks the spool, and the retry backoff.
var (
	pollInterval = 500 * time.Millisecond
	minBackoff   = 500 * time.Millisecond
	maxBackoff   = 30 * time.Second
)

type sender interface {
	send(ctx context.Context, lines []audit.Line) error
	close()
	// resendOnReconnect is how many already-acknowledged events to send
	// again before the next batch (0 when nothing may have been lost).
	resendOnReconnect() int64
}

// Exporter ships the audit log under one home to the configured sinks.
type Exporter struct {
	src    Source
	spool  int64
	log    *slog.Logger
	sinks  []*shipper
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan struct{}
	// appended counts the events this process appended (Appended): a
	// sink's backlog grows by them between two spool checks, and a
	// shipper inside a send that does not return checks nothing.
	appended atomic.Int64
}

type shipper struct {
	e    *Exporter
	name string
	s    sender
	full atomic.Bool
	// mark is the backlog the last spool check read and e.appended then:
	// Full adds what was appended since, so a spool overflows at the call
	// that overflows it, not at the next check (after a send that may
	// hang for sendTimeout, and a backoff of up to maxBackoff).
	mark      atomic.Pointer[spoolMark]
	overflow  atomic.Bool // Full found the spool over by its count: logged once
	lastError time.Time
}

type spoolMark struct{ backlog, appended int64 }

// Start starts shipping the audit log under home (FileSource); a nil or
// empty cfg returns a nil Exporter.
func Start(home string, cfg *Config, log *slog.Logger) (*Exporter, error) {
	return StartFrom(FileSource(home), cfg, log)
}

// StartFrom starts shipping src's chain; a nil or empty cfg returns a nil
// Exporter. The Exporter closes src.
func StartFrom(src Source, cfg *Config, log *slog.Logger) (*Exporter, error) {
	if cfg == nil || len(cfg.Sinks) == 0 {
		_ = src.Close()
		return nil, nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Exporter{src: src, spool: cfg.SpoolEvents, log: log, cancel: cancel, kick: make(chan struct{}, 1)}
	for _, c := range cfg.Sinks {
		sh, err := newShipper(e, c)
		if err != nil {
			for _, sh := range e.sinks {
				sh.s.close()
			}
			_ = src.Close()
			cancel()
			return nil, fmt.Errorf("sink %s: %w", c.Name, err)
		}
		e.sinks = append(e.sinks, sh)
	}
	for _, sh := range e.sinks {
		sh.checkSpool() // before the first call, not a poll later
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			sh.run(ctx)
		}()
	}
	return e, nil
}

// newShipper makes a sink's sender.
func newShipper(e *Exporter, c SinkConfig) (*shipper, error) {
	var (
		s   sender
		err error
	)
	switch c.Type {
	case "webhook":
		s = newWebhook(c)
	case "syslog":
		s, err = newSyslog(c)
	case "otlp":
		s, err = newOTLPLogs(c)
	default:
		err = errors.New("unknown sink type")
	}
	if err != nil {
		return nil, err
	}
	if fs, ok := e.src.(*fileSource); ok {
		if err := fs.open(c.Name); err != nil {
			s.close()
			return nil, err
		}
	}
	e.src.Bind(c.Name, Destination(c))
	return &shipper{e: e, name: c.Name, s: s}, nil
}

// Full says a sink's spool is full: more than SpoolEvents events wait for
// it, or rotation pruned events it never took. Between two checks of the
// log it counts the events this process appended since the last one.
func (e *Exporter) Full() bool {
	if e == nil {
		return false
	}
	now := e.appended.Load()
	for _, s := range e.sinks {
		if s.full.Load() {
			return true
		}
		if m := s.mark.Load(); m != nil && m.backlog+now-m.appended > e.spool {
			if !s.overflow.Swap(true) {
				s.e.log.Error("audit export: the spool is full: events wait for the sink longer than the spool holds; under audit.required every call is refused until it catches up",
					"sink", s.name, "waiting", m.backlog+now-m.appended, "spool_events", e.spool)
			}
			return true
		}
	}
	return false
}

// Appended says n events were appended: they count against every sink's
// spool now, and are shipped now, not at the next poll.
func (e *Exporter) Appended(n int) {
	if e == nil {
		return
	}
	e.appended.Add(int64(n))
	e.Kick()
}

// Kick says events were appended: ship them now, not at the next poll.
func (e *Exporter) Kick() {
	if e == nil {
		return
	}
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// Close stops shipping; what was not shipped stays in the log for the
// next process.
func (e *Exporter) Close() error {
	if e == nil {
		return nil
	}
	e.cancel()
	e.wg.Wait()
	for _, s := range e.sinks {
		s.s.close()
	}
	return e.src.Close()
}

// Backlog returns, per sink, how many events wait for it.
func (e *Exporter) Backlog() map[string]int64 {
	out := map[string]int64{}
	if e == nil {
		return out
	}
	head, _ := e.src.Head()
	for _, s := range e.sinks {
		c, _ := s.cursor()
		out[s.name] = max(head-c.seq, 0)
	}
	return out
}

type cursor struct {
	seq  int64
	hash string
}

// cursor reads the sink's position; absent is 0 (nothing shipped).
func (s *shipper) cursor() (cursor, error) {
	seq, hash, err := s.e.src.Cursor(s.name)
	return cursor{seq: seq, hash: hash}, err
}

// checkSpool sets full from the backlog; every process does it, so that
// each refuses calls under audit.required when a sink falls behind.
func (s *shipper) checkSpool() {
	// Read before the head: an event counted in it and appended after
	// is in the head too, and counted twice (a spool full a few events
	// early), never missed.
	appended := s.e.appended.Load()
	c, err := s.cursor()
	head, herr := s.e.src.Head()
	// A cursor past the head acknowledges events that do not exist:
	// read as valid it would skip every event until the head caught up.
	full := err != nil || herr != nil || c.seq > head || head-c.seq > s.e.spool
	if !full && head > c.seq {
		// Rotation may have pruned events the sink never took, however
		// large spool_events is: those are lost to it, which is full.
		_, earliest, rerr := s.e.src.ReadAfter(c.seq, 1)
		full = rerr != nil || earliest > c.seq+1
	}
	s.mark.Store(&spoolMark{backlog: max(head-c.seq, 0), appended: appended})
	wasFull := s.full.Load() || s.overflow.Load()
	s.overflow.Store(false)
	if full && !wasFull {
		s.e.log.Error("audit export: the spool is full: events wait for the sink longer than the spool holds; under audit.required every call is refused until it catches up",
			"sink", s.name, "waiting", head-c.seq, "spool_events", s.e.spool)
	} else if !full && wasFull {
		s.e.log.Info("audit export: the sink caught up", "sink", s.name)
	}
	s.full.Store(full)
}

// run ships for the sink while it holds the role. A failed batch backs
// off (doubling up to maxBackoff) and kicks do not cut that wait short:
// appends happen on every call, and a sink that is down would otherwise
// be retried, and the lease renewed, at the pace of the calls. After
// maxFailedSends failures in a row it gives the role up (Release) and
// takes it again only when no other process did.
func (s *shipper) run(ctx context.Context) {
	backoff := minBackoff
	var (
		resend int64
		failed int // batches refused in a row
	)
	for {
		leader, lerr := s.e.src.Lead(s.name)
		if lerr != nil {
			s.reportAs("audit export: this process cannot ship for the sink", lerr)
		}
		s.checkSpool()
		wait, failing := pollInterval, false
		if !leader {
			failed, backoff = 0, minBackoff
		} else {
			shipped, err := s.shipOnce(ctx, &resend)
			switch {
			case err != nil:
				s.report(err)
				failed++
				wait, backoff, failing = backoff, min(backoff*2, maxBackoff), true
				if failed >= maxFailedSends {
					failed = 0
					if rerr := s.e.src.Release(s.name); rerr != nil {
						s.reportAs("audit export: giving up the sink's role failed", rerr)
					}
					s.e.log.Warn("audit export: the sink refused several batches in a row; giving up shipping for it so that another process can", "sink", s.name, "failures", maxFailedSends)
				}
			case shipped > 0:
				failed, backoff = 0, minBackoff
				s.checkSpool()
				continue // more may be waiting
			default:
				failed, backoff = 0, minBackoff
			}
		}
		kick := s.e.kick
		if failing {
			kick = nil // a kick does not shorten a failing sink's backoff
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-kick:
		case <-t.C:
		}
		t.Stop()
	}
}

// report logs a sink's failure, at most once a minute.
func (s *shipper) report(err error) {
	s.reportAs("audit export: the sink did not take a batch; it will be sent again", err)
}

func (s *shipper) reportAs(msg string, err error) {
	if time.Since(s.lastError) < time.Minute {
		return
	}
	s.lastError = time.Now()
	s.e.log.Warn(msg, "sink", s.name, "err", err)
}

// shipOnce sends the next batch after the cursor and moves the cursor.
func (s *shipper) shipOnce(ctx context.Context, resend *int64) (int, error) {
	c, err := s.cursor()
	if err != nil {
		return 0, err
	}
	from := c.seq
	if n := s.s.resendOnReconnect(); n > 0 && from > 0 {
		*resend = n
	}
	if *resend > 0 {
		from = max(c.seq-*resend, 0)
	}
	lines, earliest, err := s.e.src.ReadAfter(from, maxBatch)
	if err != nil {
		return 0, err
	}
	if len(lines) == 0 {
		return 0, nil
	}
	if lines[0].Seq > from+1 && earliest > from+1 {
		n := lines[0].Seq - from - 1
		if lines[0].Seq > c.seq+1 {
			s.e.log.Error("audit export: rotation pruned events this sink never took; the receiver will see a gap", "sink", s.name, "from", c.seq+1, "to", lines[0].Seq-1, "count", n)
		}
	} else if c.seq > 0 && from == c.seq && lines[0].Prev != c.hash {
		s.e.log.Error("audit export: the local log no longer chains to the last event shipped: it was changed after shipping", "sink", s.name, "seq", c.seq)
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	if err := s.s.send(ctx, lines); err != nil {
		return 0, err
	}
	last := lines[len(lines)-1]
	*resend = 0
	if last.Seq <= c.seq {
		return len(lines), nil // a resend of events already taken
	}
	if err := s.e.src.SetCursor(s.name, last.Seq, last.Hash); err != nil {
		return 0, err
	}
	return len(lines), nil
}

// Ship sends everything the log holds to every sink, waiting at most d;
// it reports the sinks that did not catch up. It is for `mcpseal audit
// ship`: a process that appends nothing drains what others left.
func (e *Exporter) Ship(d time.Duration) error {
	if e == nil {
		return nil
	}
	deadline := time.Now().Add(d)
	for {
		behind := []string{}
		for name, n := range e.Backlog() {
			if n > 0 {
				behind = append(behind, name)
			}
		}
		if len(behind) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sinks still behind: %s", strings.Join(behind, ", "))
		}
		e.Kick()
		time.Sleep(50 * time.Millisecond)
	}
}
