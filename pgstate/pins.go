package pgstate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpseal/mcpseal/pin"
)

// maxChainBytes bounds the event chain read into memory, as pin bounds
// events.jsonl: one byte more than pin accepts, so pin sees the overrun.
const maxChainBytes = 256<<20 + 1

// PinChannel is the NOTIFY channel a committed pin store change is
// announced on; the payload is the server id.
const PinChannel = "mcpseal_pins"

// Pins returns the database's pin store.
func (d *DB) Pins() *pin.Store { return pin.OpenBackend(pinBackend{d}) }

type pinBackend struct{ d *DB }

// Generation implements pin.Watcher: 0 until Watch is called, after which
// notifications and polls move it.
func (b pinBackend) Generation(id string) uint64 {
	if b.d.watch == nil {
		return 0
	}
	return b.d.watch.Generation(id)
}

func (b pinBackend) Begin(exclusive bool) (pin.Txn, error) {
	opts, lock := readOnly, ""
	if exclusive {
		opts, lock = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, pinLockSQL
	}
	ctx, tx, done, err := b.d.begin(context.Background(), 1, opts, "opening the pin store", lock)
	if err != nil {
		return nil, err
	}
	return &pinTxn{d: b.d, tx: tx, ctx: ctx, cancel: done, exclusive: exclusive}, nil
}

type pinTxn struct {
	d         *DB
	tx        pgx.Tx
	ctx       context.Context
	cancel    func() // rolls back what is not committed, ends the call's time
	exclusive bool
	done      bool // committed
}

func (t *pinTxn) Events() ([]byte, error) {
	rows, err := t.tx.Query(t.ctx, `SELECT line FROM mcpseal_pin_events ORDER BY seq`)
	if err != nil {
		return nil, t.d.fault("reading the event chain", err)
	}
	defer rows.Close()
	var buf bytes.Buffer
	for rows.Next() {
		var line []byte
		if err := rows.Scan(&line); err != nil {
			return nil, t.d.fault("reading the event chain", err)
		}
		if buf.Len()+len(line)+1 > maxChainBytes {
			// pin refuses a chain past its limit; say so without
			// reading the rest.
			buf.Write(make([]byte, maxChainBytes-buf.Len()))
			return buf.Bytes(), nil
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		return nil, t.d.fault("reading the event chain", err)
	}
	return buf.Bytes(), nil
}

func (t *pinTxn) Record(id string) ([]byte, bool, error) {
	var data []byte
	err := t.tx.QueryRow(t.ctx, `SELECT data FROM mcpseal_pin_records WHERE id = $1`, id).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, t.d.fault("reading a record", err)
	}
	return data, true, nil
}

func (t *pinTxn) RecordIDs() ([]string, error) {
	rows, err := t.tx.Query(t.ctx, `SELECT id FROM mcpseal_pin_records ORDER BY id`)
	if err != nil {
		return nil, t.d.fault("listing records", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, t.d.fault("listing records", err)
	}
	return ids, nil
}

func (t *pinTxn) Commit(id string, data, line []byte) error {
	if !t.exclusive || t.done {
		return errors.New("pin store: a commit outside an exclusive transaction")
	}
	var head struct {
		Seq int64 `json:"seq"`
	}
	if err := json.Unmarshal(line, &head); err != nil || head.Seq <= 0 {
		return errors.New("pin store: an event without a sequence number")
	}
	if _, err := t.tx.Exec(t.ctx, `INSERT INTO mcpseal_pin_events (seq, line) VALUES ($1, $2)`, head.Seq, line); err != nil {
		return t.d.fault("appending an event", err)
	}
	var err error
	if data != nil {
		_, err = t.tx.Exec(t.ctx, `INSERT INTO mcpseal_pin_records (id, data) VALUES ($1, $2)
			ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data`, id, data)
	} else {
		_, err = t.tx.Exec(t.ctx, `DELETE FROM mcpseal_pin_records WHERE id = $1;`, id)
		if err == nil {
			_, err = t.tx.Exec(t.ctx, `DELETE FROM mcpseal_pin_seen WHERE id = $1`, id)
		}
	}
	if err != nil {
		return t.d.fault("writing a record", err)
	}
	if _, err := t.tx.Exec(t.ctx, `SELECT pg_notify($1, $2)`, PinChannel, id); err != nil {
		return t.d.fault("announcing a change", err)
	}
	if err := t.tx.Commit(t.ctx); err != nil {
		return t.d.fault("committing", err)
	}
	t.done = true
	return nil
}

func (t *pinTxn) Touch(id string, at time.Time) {
	const q = `INSERT INTO mcpseal_pin_seen (id, at) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET at = EXCLUDED.at`
	if t.exclusive && !t.done {
		_, _ = t.tx.Exec(t.ctx, q, id, at)
		return
	}
	_, _ = t.d.pool.Exec(t.ctx, q, id, at)
}

func (t *pinTxn) LastSeen(id string) time.Time {
	var at time.Time
	if err := t.tx.QueryRow(t.ctx, `SELECT at FROM mcpseal_pin_seen WHERE id = $1`, id).Scan(&at); err != nil {
		return time.Time{}
	}
	return at.UTC()
}

func (t *pinTxn) Close() {
	defer t.cancel()
	if t.done {
		return
	}
	if t.exclusive {
		// Only last-seen times can be uncommitted here.
		_ = t.tx.Commit(t.ctx)
	}
}
