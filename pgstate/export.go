package pgstate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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
// when the lease runs out. The cursor only moves forward and only for the
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
}

// AuditExport returns the database's audit log as a siem.Source; its
// leases are this process's.
func (d *DB) AuditExport() *AuditExport {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return &AuditExport{d: d, holder: hex.EncodeToString(b[:])}
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

// Cursor returns the sink's cursor (0, "" when it has none yet). A row
// that is not what SetCursor writes (a negative seq, a hash that is not
// 64 lowercase hex, a seq with no hash) is an error, never 0.
func (x *AuditExport) Cursor(sink string) (int64, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), x.d.timeout)
	defer cancel()
	if err := x.d.check(ctx); err != nil {
		return 0, "", err
	}
	var (
		seq  int64
		hash string
	)
	err := x.d.pool.QueryRow(ctx, `SELECT seq, hash FROM mcpseal_audit_cursors WHERE sink = $1`, sink).Scan(&seq, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", x.d.fault("reading an audit sink's cursor", err)
	}
	if seq == 0 && hash == "" {
		return 0, "", nil // leased, nothing acknowledged yet
	}
	if seq < 1 || !audit.IsHash(hash) {
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
	var holder string
	err := x.d.pool.QueryRow(ctx, `INSERT INTO mcpseal_audit_cursors AS c (sink, seq, hash, holder, lease_until)
		VALUES ($1, 0, '', $2, now() + make_interval(secs => $3))
		ON CONFLICT (sink) DO UPDATE SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until
		WHERE c.holder = EXCLUDED.holder OR c.lease_until < now()
		RETURNING holder`, sink, x.holder, ExportLease.Seconds()).Scan(&holder)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // another replica's lease
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
	tag, err := x.d.pool.Exec(ctx, `UPDATE mcpseal_audit_cursors SET seq = $3, hash = $4
		WHERE sink = $1 AND holder = $2 AND lease_until >= now() AND seq < $3`, sink, x.holder, seq, hash)
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
