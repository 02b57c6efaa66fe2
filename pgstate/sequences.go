package pgstate

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/note"

	"github.com/mcpseal/mcpseal/lock"
	"github.com/mcpseal/mcpseal/tlog"
)

// Sequences returns the database's lock sequence store: the highest
// signed manifest every replica accepted, per lock (lock.SequenceStore).
func (d *DB) Sequences() lock.SequenceStore { return sequences{d} }

type sequences struct{ d *DB }

// maxSequenceKey bounds a lock's key (its absolute path).
const maxSequenceKey = 4096

func (s sequences) Accept(key string, sequence uint64, lockDigest string) error {
	d := s.d
	if len(key) > maxSequenceKey || sequence > math.MaxInt64 || len(lockDigest) > 128 {
		return fmt.Errorf("lock: sequence store: a key, sequence or digest out of range")
	}
	// Serialise the first record of a key too: FOR UPDATE locks only
	// rows that exist.
	ctx, tx, done, err := d.begin(context.Background(), 1, pgx.TxOptions{}, "lock: sequence store", sequenceLockSQL)
	if err != nil {
		return err
	}
	defer done()
	var (
		seen   int64
		digest string
		known  = true
	)
	err = tx.QueryRow(ctx, `SELECT sequence, lock_digest FROM mcpseal_lock_sequences WHERE key = $1`, key).Scan(&seen, &digest)
	if errors.Is(err, pgx.ErrNoRows) {
		known, err = false, nil
	}
	if err != nil {
		return d.fault("lock: sequence store", err)
	}
	if seen < 0 {
		return errors.New("lock: the sequence store holds a negative sequence; refusing rather than forgetting what this fleet has seen")
	}
	record, err := lock.JudgeSequence(uint64(seen), digest, known, sequence, lockDigest)
	if !record || err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO mcpseal_lock_sequences (key, sequence, lock_digest) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET sequence = EXCLUDED.sequence, lock_digest = EXCLUDED.lock_digest`, key, int64(sequence), lockDigest); err != nil {
		return d.fault("lock: sequence store", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return d.fault("lock: sequence store", err)
	}
	return nil
}

// Seen returns the database's store of accepted transparency log
// checkpoints (tlog.SeenStore).
func (d *DB) Seen() tlog.SeenStore { return seen{d} }

type seen struct{ d *DB }

func (s seen) Load(key note.Verifier) (*tlog.SignedCheckpoint, error) {
	d := s.d
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel()
	if err := d.check(ctx); err != nil {
		return nil, err
	}
	var msg []byte
	err := d.pool.QueryRow(ctx, `SELECT note FROM mcpseal_tlog_seen WHERE origin = $1 AND key_hash = $2`, key.Name(), int64(key.KeyHash())).Scan(&msg)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, d.fault("reading the last accepted checkpoint", err)
	}
	c, err := tlog.OpenCheckpoint(msg, key, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("the last checkpoint this fleet accepted for %s does not verify: %w", key.Name(), err)
	}
	return c, nil
}

// Store records c unless a larger checkpoint was recorded meanwhile (by
// another replica): the store only moves forward; whether the two are
// consistent is the next verification's to prove.
func (s seen) Store(key note.Verifier, c *tlog.SignedCheckpoint) error {
	d := s.d
	if len(c.Note) > tlog.MaxCheckpointNote {
		return errors.New("tlog: a checkpoint over its size limit")
	}
	ctx, tx, done, err := d.begin(context.Background(), 1, pgx.TxOptions{}, "recording a checkpoint", "")
	if err != nil {
		return err
	}
	defer done()
	var msg []byte
	err = tx.QueryRow(ctx, `SELECT note FROM mcpseal_tlog_seen WHERE origin = $1 AND key_hash = $2 FOR UPDATE`, key.Name(), int64(key.KeyHash())).Scan(&msg)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		_, err = tx.Exec(ctx, `INSERT INTO mcpseal_tlog_seen (origin, key_hash, note) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, key.Name(), int64(key.KeyHash()), c.Note)
	case err != nil:
	default:
		if prev, perr := tlog.OpenCheckpoint(msg, key, nil, 0); perr == nil && prev.Size > c.Size {
			return nil
		}
		_, err = tx.Exec(ctx, `UPDATE mcpseal_tlog_seen SET note = $3 WHERE origin = $1 AND key_hash = $2`, key.Name(), int64(key.KeyHash()), c.Note)
	}
	if err != nil {
		return d.fault("recording a checkpoint", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return d.fault("recording a checkpoint", err)
	}
	return nil
}
