package pgstate

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgxlisten"
)

// PollInterval is how often a watching DB checks the chain's head itself,
// in case a notification was lost: the bound on propagation when LISTEN
// fails silently.
const PollInterval = 500 * time.Millisecond

// OwnerRecheck is how often a watching DB checks its tables' owners and
// grants again (see poll).
const OwnerRecheck = 5 * time.Second

// maxWatched bounds the per-server generations a watcher keeps; past it
// they are folded into the global one (every server then looks moved
// once, which costs one check each, never a missed change).
const maxWatched = 10000

// A watcher turns the database's change notifications into generations
// (gate.PinWatcher): a per-server count moved by a notification naming the
// server, and a global count moved by anything that may have hidden one
// — a (re)connection of the listener, a poll that found the chain's head
// moved or could not read it.
type watcher struct {
	global atomic.Uint64
	mu     sync.Mutex
	ids    map[string]uint64
	head   int64 // the chain's head seq the last poll saw; -1 unknown
	stop   context.CancelFunc
	done   chan struct{}
}

// Generation implements pin.Watcher. It never does I/O.
func (w *watcher) Generation(id string) uint64 {
	w.mu.Lock()
	n := w.ids[id]
	w.mu.Unlock()
	return w.global.Load() + n
}

func (w *watcher) moved(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.ids[id]; !ok && len(w.ids) >= maxWatched {
		w.ids = map[string]uint64{}
		w.global.Add(maxWatched) // more than any per-server count dropped could hide
	}
	w.ids[id]++
}

func (w *watcher) movedAll() { w.global.Add(1) }

// Watch starts following the database's changes, for a long-running
// process whose sessions cache what they verified (the gateway, run).
// Close stops it.
func (d *DB) Watch(logger *slog.Logger) {
	if d.watch != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{ids: map[string]uint64{}, head: -1, stop: cancel, done: make(chan struct{})}
	d.watch = w
	l := &pgxlisten.Listener{
		Connect: func(ctx context.Context) (*pgx.Conn, error) {
			c, err := d.pool.Acquire(ctx)
			if err != nil {
				return nil, err
			}
			return c.Hijack(), nil
		},
		LogError: func(_ context.Context, err error) {
			if ctx.Err() == nil {
				logger.Warn("state database: change notifications interrupted; polling meanwhile", "state", d.name, "err", scrub(err))
			}
			w.movedAll()
		},
		ReconnectDelay: time.Second,
	}
	l.Handle(PinChannel, pinHandler{w})
	var wg sync.WaitGroup
	wg.Go(func() { _ = l.Listen(ctx) })
	wg.Go(func() { d.poll(ctx, w) })
	go func() { wg.Wait(); close(w.done) }()
}

type pinHandler struct{ w *watcher }

func (h pinHandler) HandleNotification(_ context.Context, n *pgconn.Notification, _ *pgx.Conn) error {
	if len(n.Payload) > 64 {
		// Not one of ours: treat it as a change to anything.
		h.w.movedAll()
		return errors.New("a pin notification with an unexpected payload")
	}
	h.w.moved(n.Payload)
	return nil
}

// HandleBacklog runs on every (re)connection: what changed while the
// listener was away is unknown, so everything may have.
func (h pinHandler) HandleBacklog(context.Context, string, *pgx.Conn) error {
	h.w.movedAll()
	return nil
}

// poll reads the chain's head every PollInterval and moves every
// generation when it moved, or when it cannot be read.
//
// Every OwnerRecheck it also checks the tables' owners and grants again
// (checkOwners; changes check them in their own transaction): tables
// handed to another role hold every session, as an unreachable database
// does, until they are given back.
func (d *DB) poll(ctx context.Context, w *watcher) {
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	lastOwners := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		qctx, cancel := context.WithTimeout(ctx, d.timeout)
		if time.Since(lastOwners) >= OwnerRecheck && d.ready.Load() {
			lastOwners = time.Now()
			if err := d.checkOwners(qctx, d.pool); errors.Is(err, ErrForeignOwner) {
				d.ready.Store(false) // the next store call checks again, and fails closed
				w.movedAll()
			}
		}
		var head int64
		err := d.pool.QueryRow(qctx, `SELECT coalesce(max(seq), 0) FROM mcpseal_pin_events`).Scan(&head)
		cancel()
		switch {
		case err != nil:
			w.head = -1
			w.movedAll()
		case head != w.head:
			if w.head != -1 {
				w.movedAll()
			}
			w.head = head
		}
	}
}
