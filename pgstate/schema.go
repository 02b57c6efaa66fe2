package pgstate

import (
	"context"
	"fmt"
)

// migrations are the schema's versions: migrations[i] takes it from
// version i to i+1. They are append-only: a released step never changes.
var migrations = []string{
	// 1: the pin store.
	`CREATE TABLE mcpseal_pin_events (
		seq  bigint PRIMARY KEY CHECK (seq > 0),
		line bytea NOT NULL
	);
	CREATE TABLE mcpseal_pin_records (
		id   text PRIMARY KEY,
		data bytea NOT NULL
	);
	CREATE TABLE mcpseal_pin_seen (
		id text PRIMARY KEY,
		at timestamptz NOT NULL
	);`,
	// 2: the audit log, one chain for every replica (see audit.go).
	`CREATE TABLE mcpseal_audit_events (
		seq  bigint PRIMARY KEY CHECK (seq > 0),
		line bytea NOT NULL
	);
	CREATE TABLE mcpseal_audit_head (
		one  boolean PRIMARY KEY DEFAULT true CHECK (one),
		seq  bigint NOT NULL,
		hash text NOT NULL
	);`,
	// 3: lock manifest sequences and transparency log checkpoints.
	`CREATE TABLE mcpseal_lock_sequences (
		key         text PRIMARY KEY,
		sequence    bigint NOT NULL CHECK (sequence >= 0),
		lock_digest text NOT NULL
	);
	CREATE TABLE mcpseal_tlog_seen (
		origin   text NOT NULL,
		key_hash bigint NOT NULL,
		note     bytea NOT NULL,
		PRIMARY KEY (origin, key_hash)
	);`,
	// 4: the audit stream's sink cursors and who ships for each (export.go).
	`CREATE TABLE mcpseal_audit_cursors (
		sink        text PRIMARY KEY,
		seq         bigint NOT NULL CHECK (seq >= 0),
		hash        text NOT NULL,
		holder      text NOT NULL,
		lease_until timestamptz NOT NULL
	);`,
	// 5: sealed session ids ended by their client, until they expire
	// (ended.go).
	`CREATE TABLE mcpseal_ended_sessions (
		id      text PRIMARY KEY,
		expires timestamptz NOT NULL
	);`,
	// 6: the destination each sink's cursor belongs to (export.go): a
	// fingerprint of the receiver, '' for a row written before it (the
	// first replica that leads for the sink records its own).
	`ALTER TABLE mcpseal_audit_cursors ADD COLUMN dest text NOT NULL DEFAULT '';`,
}

// Version is the schema version this binary writes and reads.
func Version() int { return len(migrations) }

// Migrate creates or upgrades the schema of the database dsn names, and
// returns the version it found and the version it left. Running it again
// does nothing; running it from several replicas at once is safe (the
// steps are serialised by an advisory lock, each in one transaction). A
// schema newer than this binary's is refused (ErrSchemaNewer).
func Migrate(ctx context.Context, dsn string) (from, to int, err error) {
	d, err := connect(ctx, dsn, Options{MaxConns: 1})
	if err != nil {
		return 0, 0, err
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*d.timeout)
	defer cancel()
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return 0, 0, d.fault("starting the migration", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, schemaLock); err != nil {
		return 0, 0, d.fault("locking the schema", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS mcpseal_schema (
		one     boolean PRIMARY KEY DEFAULT true CHECK (one),
		version integer NOT NULL CHECK (version >= 0)
	)`); err != nil {
		return 0, 0, d.fault("creating the schema table", err)
	}
	from, err = d.version(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	if from > len(migrations) {
		return from, from, checkVersion(from)
	}
	for v := from; v < len(migrations); v++ {
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return from, v, d.fault(fmt.Sprintf("migrating to version %d", v+1), err)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO mcpseal_schema (one, version) VALUES (true, $1)
		ON CONFLICT (one) DO UPDATE SET version = EXCLUDED.version`, len(migrations)); err != nil {
		return from, from, d.fault("recording the schema version", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return from, from, d.fault("committing the migration", err)
	}
	return from, len(migrations), nil
}
