package pgstate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpseal/mcpseal/audit"
)

// The audit log in the database is one chain for the whole fleet,
// serialised by the database: every append locks the events table
// (auditLockSQL), reads the tip (the last row) and the head row, writes its
// events after the tip and moves the head, in one transaction. One chain
// rather than one per replica: `audit verify --state` then checks one
// sequence with no gaps whatever the number of replicas, and no replica
// can hide another's events by claiming a chain of its own. The price is
// that appends from every replica queue on one lock; a replica's sink
// writes batches (up to 256 events, every 50 ms), not single events. The
// lines are the file log's, byte for byte, so audit.Verify's rules
// apply: a row edited, deleted or inserted by hand breaks the chain, and
// rows cut from the end are caught by the head. Nothing is pruned.

// maxAuditTail bounds audit tail's rows.
const maxAuditTail = audit.MaxTail

// AuditLog appends to the database's audit log.
type AuditLog struct {
	d   *DB
	now func() time.Time
}

// Audit returns the database's audit log.
func (d *DB) Audit() *AuditLog { return &AuditLog{d: d, now: time.Now} }

// Close does nothing: the DB owns the connections.
func (l *AuditLog) Close() error { return nil }

// AppendAll writes events in order after the fleet's last event, as
// audit.Log.AppendAll does; an error means none of them was written.
func (l *AuditLog) AppendAll(es []audit.Event) error {
	if len(es) == 0 {
		return nil
	}
	if _, _, err := audit.EncodeAfter(es, 0, "", l.now()); err != nil {
		return err
	}
	d := l.d
	ctx, tx, done, err := d.begin(context.Background(), 1, pgx.TxOptions{}, "appending to the audit log", auditLockSQL)
	if err != nil {
		return err
	}
	defer done()
	seq, hash, err := auditTip(ctx, tx)
	if err != nil {
		return d.fault("reading the audit log's tip", err)
	}
	var (
		headSeq  int64
		headHash string
		hasHead  = true
	)
	err = tx.QueryRow(ctx, `SELECT seq, hash FROM mcpseal_audit_head`).Scan(&headSeq, &headHash)
	if errors.Is(err, pgx.ErrNoRows) {
		hasHead, err = false, nil
	}
	if err != nil {
		return d.fault("reading the audit log's head", err)
	}
	if gap, ok := audit.GapEvent(seq, hash, headSeq, headHash, hasHead); ok {
		es = append([]audit.Event{gap}, es...)
	} else if seq > 0 && (!hasHead || headSeq < seq) {
		// Unlike a file, the database moves the head in the append's own
		// transaction: rows past the head were written by someone else.
		// The next event says so, and it stays in the chain.
		es = append([]audit.Event{{Op: audit.OpGap, Outcome: audit.Noted, Code: "rows-past-head", Count: seq - headSeq}}, es...)
	}
	lines, last, err := audit.EncodeAfter(es, seq, hash, l.now())
	if err != nil {
		return err
	}
	rows := make([][]any, len(lines))
	for i, line := range lines {
		rows[i] = []any{seq + int64(i) + 1, line}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"mcpseal_audit_events"}, []string{"seq", "line"}, pgx.CopyFromRows(rows)); err != nil {
		return d.fault("appending audit events", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO mcpseal_audit_head (one, seq, hash) VALUES (true, $1, $2)
		ON CONFLICT (one) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash`, seq+int64(len(lines)), last); err != nil {
		return d.fault("moving the audit log's head", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return d.fault("committing audit events", err)
	}
	return nil
}

// auditTip returns the last row's seq and line hash (0, "" when empty).
func auditTip(ctx context.Context, tx pgx.Tx) (int64, string, error) {
	var (
		seq  int64
		line []byte
	)
	err := tx.QueryRow(ctx, `SELECT seq, line FROM mcpseal_audit_events ORDER BY seq DESC LIMIT 1`).Scan(&seq, &line)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	// The next line chains to this one's bytes; that its seq column
	// matches the line is for verify to judge.
	return seq, audit.LineHash(line), nil
}

// VerifyAudit checks the whole audit log, as audit.Verify checks files.
// It reads in one snapshot, row by row.
func (d *DB) VerifyAudit(ctx context.Context) (*audit.Report, error) {
	ctx, tx, done, err := d.begin(ctx, 30, readOnly, "verifying the audit log", "")
	if err != nil {
		return nil, err
	}
	defer done()
	lv := audit.NewLineVerifier("database")
	var (
		headSeq  int64
		headHash string
		hasHead  = true
	)
	switch err := tx.QueryRow(ctx, `SELECT seq, hash FROM mcpseal_audit_head`).Scan(&headSeq, &headHash); {
	case errors.Is(err, pgx.ErrNoRows):
		hasHead = false
	case err != nil:
		return nil, d.fault("reading the audit log's head", err)
	default:
		lv.SetHead(headSeq, headHash)
	}
	rows, err := tx.Query(ctx, `SELECT seq, line FROM mcpseal_audit_events ORDER BY seq`)
	if err != nil {
		return nil, d.fault("reading the audit log", err)
	}
	defer rows.Close()
	var mislabeled []int64
	for rows.Next() {
		var (
			seq  int64
			line []byte
		)
		if err := rows.Scan(&seq, &line); err != nil {
			return nil, d.fault("reading the audit log", err)
		}
		if e, err := audit.ParseLine(line); err == nil && e.Seq != seq && len(mislabeled) < 100 {
			mislabeled = append(mislabeled, seq)
		}
		lv.Line(line)
	}
	if err := rows.Err(); err != nil {
		return nil, d.fault("reading the audit log", err)
	}
	rep := lv.Report()
	if rep.Events > 0 && (!hasHead || rep.Last > headSeq) {
		// A file's head may trail by an interrupted append; the
		// database's cannot (one transaction moves both): rows past it
		// were written by hand.
		kept := rep.Notes[:0]
		for _, n := range rep.Notes {
			if !strings.Contains(n, "head trails") {
				kept = append(kept, n)
			}
		}
		rep.Notes = kept
		rep.Faults = append(rep.Faults, audit.Fault{File: "database", Seq: headSeq + 1, Reason: "rows past the head: the database moves the head in the append's own transaction, so they were written outside mcpseal"})
	}
	for _, seq := range mislabeled {
		rep.Faults = append(rep.Faults, audit.Fault{File: "database", Seq: seq, Reason: fmt.Sprintf("row %d holds another event's line", seq)})
	}
	return rep, nil
}

// TailAudit returns the last n events (at most audit.MaxTail), oldest
// first, of the authenticated caller subject when it is not "" (reduced
// as the log reduces it); rows that do not parse are skipped and counted.
func (d *DB) TailAudit(ctx context.Context, n int, subject string) ([]audit.Event, int, error) {
	n = min(max(n, 0), maxAuditTail)
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	if err := d.check(ctx); err != nil {
		return nil, 0, err
	}
	q, args := `SELECT line FROM mcpseal_audit_events ORDER BY seq DESC LIMIT $1`, []any{n}
	if subject != "" {
		q = `SELECT line FROM mcpseal_audit_events WHERE convert_from(line, 'UTF8')::jsonb->>'subject' = $2 ORDER BY seq DESC LIMIT $1`
		args = append(args, subject)
	}
	rows, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, 0, d.fault("reading the audit log", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, 0, d.fault("reading the audit log", err)
	}
	var (
		out     []audit.Event
		skipped int
	)
	for i := len(lines) - 1; i >= 0; i-- {
		e, err := audit.ParseLine(lines[i])
		if err != nil {
			skipped++
			continue
		}
		out = append(out, e)
	}
	return out, skipped, nil
}
