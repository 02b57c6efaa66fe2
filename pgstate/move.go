package pgstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/pin"
)

// maxExportBytes bounds the audit log ExportAudit reads into memory, as
// audit.ReadAll bounds the files.
const maxExportBytes = 512 << 20

// Empty reports whether the database holds no pins and whether it holds
// no audit events: the imports write only into empty state.
func (d *DB) Empty(ctx context.Context) (pins, auditLog bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	if err := d.check(ctx); err != nil {
		return false, false, err
	}
	err = d.pool.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM mcpseal_pin_events) AND NOT EXISTS (SELECT 1 FROM mcpseal_pin_records),
		NOT EXISTS (SELECT 1 FROM mcpseal_audit_events)`).Scan(&pins, &auditLog)
	if err != nil {
		return false, false, d.fault("checking for state", err)
	}
	return pins, auditLog, nil
}

// ErrNotEmpty is returned by the imports for a database that already
// holds what they would write: two chains cannot be merged.
var ErrNotEmpty = errors.New("the database already holds this state")

// ImportPins writes a verified pin store snapshot into the database, in
// one transaction, byte for byte; the database must hold no pins yet.
func (d *DB) ImportPins(ctx context.Context, snap *pin.Snapshot) error {
	if err := snap.Check(); err != nil {
		return err
	}
	ctx, tx, done, err := d.begin(ctx, 30, pgx.TxOptions{}, "importing pins", pinLockSQL)
	if err != nil {
		return err
	}
	defer done()
	var n int64
	if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM mcpseal_pin_events) + (SELECT count(*) FROM mcpseal_pin_records)`).Scan(&n); err != nil {
		return d.fault("checking the pin store", err)
	}
	if n > 0 {
		return fmt.Errorf("%w: the pin store is not empty", ErrNotEmpty)
	}
	var rows [][]any
	rest := snap.Events
	for seq := int64(1); len(rest) > 0; seq++ {
		i := bytes.IndexByte(rest, '\n')
		rows = append(rows, []any{seq, rest[:i]})
		rest = rest[i+1:]
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"mcpseal_pin_events"}, []string{"seq", "line"}, pgx.CopyFromRows(rows)); err != nil {
		return d.fault("importing events", err)
	}
	for _, id := range snap.IDs() {
		if _, err := tx.Exec(ctx, `INSERT INTO mcpseal_pin_records (id, data) VALUES ($1, $2)`, id, snap.Records[id]); err != nil {
			return d.fault("importing records", err)
		}
		if t, ok := snap.Seen[id]; ok {
			if _, err := tx.Exec(ctx, `INSERT INTO mcpseal_pin_seen (id, at) VALUES ($1, $2)`, id, t); err != nil {
				return d.fault("importing last-seen times", err)
			}
		}
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, PinChannel); err != nil {
		return d.fault("announcing the import", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return d.fault("committing the import", err)
	}
	return nil
}

// ImportAudit writes a verified audit log (its lines, oldest first, and
// its head) into the database in one transaction; the database must hold
// no audit events yet.
func (d *DB) ImportAudit(ctx context.Context, lines [][]byte, headSeq int64, headHash string) error {
	lv := audit.NewLineVerifier("import")
	if headSeq > 0 {
		lv.SetHead(headSeq, headHash)
	}
	for _, l := range lines {
		lv.Line(l)
	}
	if rep := lv.Report(); !rep.OK() {
		return fmt.Errorf("the audit log to import does not verify (%d faults)", len(rep.Faults))
	}
	ctx, tx, done, err := d.begin(ctx, 30, pgx.TxOptions{}, "importing the audit log", auditLockSQL)
	if err != nil {
		return err
	}
	defer done()
	var n int64
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM mcpseal_audit_events`).Scan(&n); err != nil {
		return d.fault("checking the audit log", err)
	}
	if n > 0 {
		return fmt.Errorf("%w: the audit log is not empty", ErrNotEmpty)
	}
	rows := make([][]any, len(lines))
	for i, l := range lines {
		e, err := audit.ParseLine(l)
		if err != nil {
			return err
		}
		rows[i] = []any{e.Seq, l}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"mcpseal_audit_events"}, []string{"seq", "line"}, pgx.CopyFromRows(rows)); err != nil {
		return d.fault("importing audit events", err)
	}
	if len(lines) > 0 {
		if headSeq == 0 {
			e, _ := audit.ParseLine(lines[len(lines)-1])
			headSeq, headHash = e.Seq, audit.LineHash(lines[len(lines)-1])
		}
		if _, err := tx.Exec(ctx, `INSERT INTO mcpseal_audit_head (one, seq, hash) VALUES (true, $1, $2)`, headSeq, headHash); err != nil {
			return d.fault("importing the audit head", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return d.fault("committing the import", err)
	}
	return nil
}

// ExportAudit returns the audit log's lines, oldest first, and its head,
// after verifying it; a log with faults is refused.
func (d *DB) ExportAudit(ctx context.Context) ([][]byte, int64, string, error) {
	rep, err := d.VerifyAudit(ctx)
	if err != nil {
		return nil, 0, "", err
	}
	if !rep.OK() {
		return nil, 0, "", fmt.Errorf("the database's audit log does not verify (%d faults); run 'mcpseal audit verify --state'", len(rep.Faults))
	}
	ctx, tx, done, err := d.begin(ctx, 30, readOnly, "exporting the audit log", "")
	if err != nil {
		return nil, 0, "", err
	}
	defer done()
	var size int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(sum(length(line)), 0) FROM mcpseal_audit_events`).Scan(&size); err != nil {
		return nil, 0, "", d.fault("sizing the audit log", err)
	}
	if size > maxExportBytes {
		return nil, 0, "", fmt.Errorf("the database's audit log passes %d bytes, more than one export moves", maxExportBytes)
	}
	rows, err := tx.Query(ctx, `SELECT line FROM mcpseal_audit_events ORDER BY seq`)
	if err != nil {
		return nil, 0, "", d.fault("reading the audit log", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, 0, "", d.fault("reading the audit log", err)
	}
	var (
		headSeq  int64
		headHash string
	)
	err = tx.QueryRow(ctx, `SELECT seq, hash FROM mcpseal_audit_head`).Scan(&headSeq, &headHash)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, "", d.fault("reading the audit head", err)
	}
	return lines, headSeq, headHash, nil
}
