package pgstate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpseal/mcpseal/audit"
)

// The fleet's audit stream (siem.Source over the database). Every replica
// appends to one chain (audit.go); shipping it once per sink, not once per
// replica, needs the cursor where every replica sees it. Each sink has one
// row in mcpseal_audit_cursors: the last seq the sink acknowledged, that
// event's line hash, and a lease: the replica that holds it (a random id
// per process) ships for the sink until lease_until, renewing it before
// every batch. A replica that dies stops renewing and another takes over
// when the lease runs out; one whose batches the sink refuses several
// times in a row gives the lease up (Release: its path to the sink may be
// the fault) and another takes over. The row also holds the fingerprint
// of the sink's destination (Bind): a replica configured with another
// receiver under the same name refuses to lead for it, and reads its
// spool as full, rather than divert the fleet's stream (the row belongs to
// the destination that acknowledged the cursor; before any did, to none). The cursor only moves forward and only for the
// lease's holder; a batch sent by a replica that lost its lease mid-send
// is sent again by the next (at least once; receivers de-duplicate by
// seq). Nothing here is on a call's path.

// ExportLease is how long a replica ships for a sink without renewing:
// longer than a batch's send time (10 s), short enough that the stream
// resumes soon after a replica dies.
const ExportLease = 30 * time.Second

// maxExportRead bounds the rows one ReadAfter returns.
const maxExportRead = 4096

// AuditExport is the database's audit log as a siem.Source.
type AuditExport struct {
	d      *DB
	holder string
	mu     sync.Mutex
	dests  map[string]string // sink -> destination fingerprint (Bind)
}

// AuditExport returns the database's audit log as a siem.Source; its
// leases are this process's.
func (d *DB) AuditExport() *AuditExport {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return &AuditExport{d: d, holder: hex.EncodeToString(b[:]), dests: map[string]string{}}
}

// ReadAfter returns up to max rows after seq in chain order, each checked
// as the file stream checks lines: a row that is not the line of its seq,
// or does not chain to the row before it in the batch, stops the stream
// (audit.ErrUnreadable) rather than ship what the chain does not hold.
// earliest is the first seq the table holds (the database log is not
// pruned: normally 1). Rows past the head are not shipped.
func (x *AuditExport) ReadAfter(after int64, max int) ([]audit.Line, int64, error) {
	max = min(max, maxExportRead)
	d := x.d
	ctx, tx, done, err := d.begin(context.Background(), 1, readOnly, "reading the audit log", "")
	if err != nil {
		return nil, 0, err
	}
	defer done()
	var earliest *int64
	if err := tx.QueryRow(ctx, `SELECT min(seq) FROM mcpseal_audit_events`).Scan(&earliest); err != nil {
		return nil, 0, d.fault("reading the audit log", err)
	}
	if earliest == nil {
		return nil, 0, nil
	}
	// Only rows up to the head: the head moves in the append's own
	// transaction, so a row past it was written outside mcpseal (the next
	// append records a rows-past-head gap event after it, and then the
	// stream carries both).
	rows, err := tx.Query(ctx, `SELECT seq, line FROM mcpseal_audit_events
		WHERE seq > $1 AND seq <= (SELECT seq FROM mcpseal_audit_head) ORDER BY seq LIMIT $2`, after, max)
	if err != nil {
		return nil, 0, d.fault("reading the audit log", err)
	}
	defer rows.Close()
	var out []audit.Line
	for rows.Next() {
		var (
			seq  int64
			line []byte
		)
		if err := rows.Scan(&seq, &line); err != nil {
			return nil, 0, d.fault("reading the audit log", err)
		}
		e, err := audit.ParseLine(line)
		if err != nil || e.Seq != seq || (len(out) > 0 && (seq != out[len(out)-1].Seq+1 || e.Prev != out[len(out)-1].Hash)) {
			return nil, 0, fmt.Errorf("%w (event %d)", audit.ErrUnreadable, seq)
		}
		out = append(out, audit.Line{Seq: seq, Prev: e.Prev, Hash: audit.LineHash(line), Raw: line})
	}
	if err := rows.Err(); err != nil {
		return nil, 0, d.fault("reading the audit log", err)
	}
	return out, *earliest, nil
}

// Head returns the head row's seq (0 when none).
func (x *AuditExport) Head() (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), x.d.timeout)
	defer cancel()
	if err := x.d.check(ctx); err != nil {
		return 0, err
	}
	var seq int64
	err := x.d.pool.QueryRow(ctx, `SELECT seq FROM mcpseal_audit_head`).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, x.d.fault("reading the audit log's head", err)
	}
	return seq, nil
}

// Bind records the destination (siem.Destination) this process ships
// the sink to. The cursor row belongs to the destination whose
// acknowledgment moved it (SetCursor records it): Lead, Cursor and
// SetCursor refuse a row that belongs to another (ErrOtherDestination).
// A row nobody acknowledged through yet (seq 0), or one written before
// schema version 6, belongs to none: the first acknowledgment records
// its destination.
func (x *AuditExport) Bind(sink, destination string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.dests[sink] = destination
}

func (x *AuditExport) dest(sink string) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.dests[sink]
}

// ErrOtherDestination is the error of Lead, Cursor and SetCursor when the
// sink's cursor row belongs to another destination than the one this
// process was configured with: another replica's configuration gives the
// sink name another receiver. This process never ships for it nor moves
// its cursor, and its spool reads as full (fail closed), until the
// configurations agree.
var ErrOtherDestination = errors.New("the audit sink's cursor belongs to another destination: another replica's configuration gives this sink name another receiver")

// Cursor returns the sink's cursor (0, "" when it has none yet). A row
// that is not what SetCursor writes (a negative seq, a hash that is not
// 64 lowercase hex, a seq with no hash) is an error, never 0, and so is
// a row that SetCursor could not have written: a seq past the head, or a
// hash that is not the line hash of the event at that seq (the database
// holds the chain). Read as valid, a cursor past the head would skip
// every event until the head caught up, with a backlog of 0.
func (x *AuditExport) Cursor(sink string) (int64, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), x.d.timeout)
	defer cancel()
	if err := x.d.check(ctx); err != nil {
		return 0, "", err
	}
	var (
		seq, head  int64
		hash, dest string
		line       []byte
	)
	err := x.d.pool.QueryRow(ctx, `SELECT c.seq, c.hash, c.dest, e.line, coalesce(h.seq, 0)
		FROM mcpseal_audit_cursors c
		LEFT JOIN mcpseal_audit_events e ON e.seq = c.seq
		LEFT JOIN mcpseal_audit_head h ON true
		WHERE c.sink = $1`, sink).Scan(&seq, &hash, &dest, &line, &head)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", x.d.fault("reading an audit sink's cursor", err)
	}
	if mine := x.dest(sink); mine != "" && dest != "" && dest != mine {
		return 0, "", fmt.Errorf("audit sink %s in %s: %w", sink, x.d.name, ErrOtherDestination)
	}
	if seq == 0 && hash == "" {
		return 0, "", nil // leased, nothing acknowledged yet
	}
	if seq < 1 || !audit.IsHash(hash) || seq > head || line == nil || audit.LineHash(line) != hash {
		return 0, "", fmt.Errorf("the cursor of audit sink %s in %s is malformed", sink, x.d.name)
	}
	return seq, hash, nil
}

// Lead takes or renews the sink's lease: true when this process holds it
// until now plus ExportLease (the database's clock decides, so replicas'
// clocks need not agree).
func (x *AuditExport) Lead(sink string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), x.d.timeout)
	defer cancel()
	if err := x.d.check(ctx); err != nil {
		return false, err
	}
	mine := x.dest(sink)
	var holder string
	err := x.d.pool.QueryRow(ctx, `INSERT INTO mcpseal_audit_cursors AS c (sink, seq, hash, holder, lease_until, dest)
		VALUES ($1, 0, '', $2, now() + make_interval(secs => $3), '')
		ON CONFLICT (sink) DO UPDATE SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until
		WHERE (c.holder = EXCLUDED.holder OR c.lease_until < now())
			AND (c.dest = $4 OR c.dest = '')
		RETURNING holder`, sink, x.holder, ExportLease.Seconds(), mine).Scan(&holder)
	if errors.Is(err, pgx.ErrNoRows) {
		// Another replica's lease, or another destination's row.
		var dest string
		err := x.d.pool.QueryRow(ctx, `SELECT dest FROM mcpseal_audit_cursors WHERE sink = $1`, sink).Scan(&dest)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return false, x.d.fault("taking an audit sink's lease", err)
		}
		if dest != "" && dest != mine {
			return false, fmt.Errorf("audit sink %s in %s: %w", sink, x.d.name, ErrOtherDestination)
		}
		return false, nil
	}
	if err != nil {
		return false, x.d.fault("taking an audit sink's lease", err)
	}
	return holder == x.holder, nil
}

// SetCursor moves the sink's cursor forward to seq, while this process
// holds the lease; siem.ErrNotLeader-like failure otherwise (the cursor
// is the new holder's).
func (x *AuditExport) SetCursor(sink string, seq int64, hash string) error {
	if seq < 1 || !audit.IsHash(hash) {
		return errors.New("a sink's cursor is a seq and a line hash")
	}
	ctx, cancel := context.WithTimeout(context.Background(), x.d.timeout)
	defer cancel()
	if err := x.d.check(ctx); err != nil {
		return err
	}
	tag, err := x.d.pool.Exec(ctx, `UPDATE mcpseal_audit_cursors SET seq = $3, hash = $4, dest = $5
		WHERE sink = $1 AND holder = $2 AND lease_until >= now() AND seq < $3 AND (dest = $5 OR dest = '')`, sink, x.holder, seq, hash, x.dest(sink))
	if err != nil {
		return x.d.fault("moving an audit sink's cursor", err)
	}
	if tag.RowsAffected() != 1 {
		return ErrLeaseLost
	}
	return nil
}

// ErrLeaseLost is SetCursor's error when another replica ships for the
// sink now (or the cursor is already past seq).
var ErrLeaseLost = errors.New("another replica ships for this audit sink now")

// Release gives up this process's lease of the sink (when it holds it),
// so that another replica takes over now: the shipper's answer to a sink
// that refuses this replica's batches.
func (x *AuditExport) Release(sink string) error {
	ctx, cancel := context.WithTimeout(context.Background(), x.d.timeout)
	defer cancel()
	if _, err := x.d.pool.Exec(ctx, `UPDATE mcpseal_audit_cursors SET lease_until = now() - interval '1 second' WHERE sink = $1 AND holder = $2`, sink, x.holder); err != nil {
		return x.d.fault("giving up an audit sink's lease", err)
	}
	return nil
}

// Close gives up this process's leases, so another replica takes over
// without waiting for them to run out.
func (x *AuditExport) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), x.d.timeout)
	defer cancel()
	if _, err := x.d.pool.Exec(ctx, `UPDATE mcpseal_audit_cursors SET lease_until = now() - interval '1 second' WHERE holder = $1`, x.holder); err != nil {
		return x.d.fault("giving up audit sink leases", err)
	}
	return nil
}
