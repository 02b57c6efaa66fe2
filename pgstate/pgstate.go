// Package pgstate keeps mcpseal's state in PostgreSQL, for a fleet of
// gateway replicas that must share one truth: a contract pinned once, a
// drift seen by any replica holding the server on every replica, one
// review and one approval every replica honours without a restart.
//
// It is a pin.Backend: the pin store's logic, record format and hash chain
// are the file store's, so the contract suite (pin/pintest) runs against
// both, and a row edited, deleted or inserted by hand fails verification
// exactly as a hand-edited file does.
//
// # Schema
//
// The schema is versioned (table mcpseal_schema, one row). Migrate creates
// or upgrades it, idempotently, under an advisory lock, each step in one
// transaction. Open refuses a database whose schema is older (run
// `mcpseal state migrate`) or newer than this binary knows (upgrade
// mcpseal): a binary never writes a schema it does not understand.
//
//	mcpseal_pin_events  (seq, line)  the event chain: each event's line, byte for byte as in events.jsonl
//	mcpseal_pin_records (id, data)   each server's record, byte for byte as in <id>.json
//	mcpseal_pin_seen    (id, at)     last-seen times; not chained, not security relevant
//
// # Concurrency
//
// Every change runs in one READ COMMITTED transaction that first locks
// the events table in EXCLUSIVE mode (pinLockSQL): changes are serialised
// across every replica, so 20 first sessions of one new server on 3
// replicas pin exactly one contract and the others verify against it.
// Reads run in a REPEATABLE READ, READ ONLY transaction: one snapshot. A
// commit writes the event and the record in the same transaction, so a
// replica killed mid-change leaves either both or neither; the lock dies
// with its transaction.
//
// # Connection strings
//
// A connection string is a libpq URL or keyword/value string. It must not
// carry a password: that would put it on command lines and in process
// listings. The password comes from PGPASSWORD, a passfile or ~/.pgpass,
// which pgx reads as libpq does; TLS is libpq's sslmode (verify-full for
// a database across a network). Redact gives the form safe to log.
package pgstate

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Timeout bounds every database operation of one store call (taking the
// advisory lock included) unless Options says otherwise.
const Timeout = 10 * time.Second

// ErrSchemaNewer is returned by Open and Migrate for a database whose
// schema a newer mcpseal wrote.
var ErrSchemaNewer = errors.New("the database's mcpseal schema is newer than this binary")

// ErrSchemaOld is returned by Open for a database without the current
// schema.
var ErrSchemaOld = errors.New("the database's mcpseal schema is missing or old; run mcpseal state migrate")

// Options tune a DB. Zero fields take the defaults.
type Options struct {
	// Timeout bounds each store call's database work.
	Timeout time.Duration
	// MaxConns bounds the pool.
	MaxConns int32
	// Lazy makes Open succeed when the database cannot be reached: the
	// schema is then checked by the first call that reaches it, and every
	// call fails until one does. A long-running gateway starts during a
	// database outage this way, holding every session, and recovers by
	// itself. A schema Open can read and refuses is refused all the same.
	Lazy bool
}

// A DB is mcpseal's state in one PostgreSQL database.
type DB struct {
	pool    *pgxpool.Pool
	timeout time.Duration
	ready   atomic.Bool // the schema was checked
	watch   *watcher    // nil unless Watch was called
	name    string      // Redact of the connection string
}

// IsURL reports whether state names a PostgreSQL database (a postgres://
// or postgresql:// URL) rather than a folder.
func IsURL(state string) bool {
	return strings.HasPrefix(state, "postgres://") || strings.HasPrefix(state, "postgresql://")
}

// parse checks and parses a connection string.
func parse(dsn string) (*pgxpool.Config, error) {
	if !IsURL(dsn) {
		return nil, errors.New("the state database must be a postgres:// URL")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		// url's errors quote the input, which may hold secrets.
		return nil, errors.New("the state database URL does not parse")
	}
	if _, has := u.User.Password(); has || u.Query().Has("password") || u.Query().Has("sslpassword") {
		return nil, errors.New("the state database URL carries a password; give it in PGPASSWORD, a passfile or ~/.pgpass instead")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("the state database URL is not a valid connection string")
	}
	return cfg, nil
}

// Redact returns the connection string's user, host, port and database,
// for logs and errors: never a password or another parameter.
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || !IsURL(dsn) {
		return "postgres://(unparsable)"
	}
	out := url.URL{Scheme: "postgres", Host: u.Host, Path: u.Path}
	if name := u.User.Username(); name != "" {
		out.User = url.User(name)
	}
	return out.String()
}

func connect(ctx context.Context, dsn string, o Options) (*DB, error) {
	cfg, err := parse(dsn)
	if err != nil {
		return nil, err
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "mcpseal"
	if _, set := cfg.ConnConfig.RuntimeParams["search_path"]; !set {
		// Not the default "$user", public: a role that may create a
		// schema named after mcpseal's role would put its own tables in
		// front of mcpseal's, and every replica would read its store.
		cfg.ConnConfig.RuntimeParams["search_path"] = "public"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", Redact(dsn), scrub(err))
	}
	d := &DB{pool: pool, timeout: o.Timeout, name: Redact(dsn)}
	if d.timeout <= 0 {
		d.timeout = Timeout
	}
	return d, nil
}

// Open connects to the database and checks its schema. It does not wait
// for the database: an unreachable one is an error of the first call
// that needs it, and each call tries again.
func Open(ctx context.Context, dsn string, o Options) (*DB, error) {
	d, err := connect(ctx, dsn, o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	v, err := d.version(ctx, d.pool)
	if err != nil && o.Lazy {
		return d, nil
	}
	if err == nil {
		err = checkVersion(v)
	}
	if err == nil {
		err = d.checkOwners(ctx, d.pool)
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	d.ready.Store(true)
	return d, nil
}

// check checks the schema once, for a DB opened lazily.
func (d *DB) check(ctx context.Context) error {
	if d.ready.Load() {
		return nil
	}
	v, err := d.version(ctx, d.pool)
	if err != nil {
		return err
	}
	if err := checkVersion(v); err != nil {
		return err
	}
	if err := d.checkOwners(ctx, d.pool); err != nil {
		return err
	}
	d.ready.Store(true)
	return nil
}

// begin starts the transaction of one store call: bounded by scale times
// the DB's timeout, after the schema check, holding the advisory lock
// lockSQL takes (none when ""). done rolls back what was not committed
// and ends the call's time.
func (d *DB) begin(parent context.Context, scale int, opts pgx.TxOptions, doing, lockSQL string, args ...any) (context.Context, pgx.Tx, func(), error) {
	ctx, cancel := context.WithTimeout(parent, time.Duration(scale)*d.timeout)
	if err := d.check(ctx); err != nil {
		cancel()
		return nil, nil, nil, err
	}
	tx, err := d.pool.BeginTx(ctx, opts)
	if err != nil {
		cancel()
		return nil, nil, nil, d.fault(doing, err)
	}
	done := func() {
		_ = tx.Rollback(context.Background())
		cancel()
	}
	if lockSQL != "" {
		if _, err := tx.Exec(ctx, lockSQL, args...); err != nil {
			done()
			return nil, nil, nil, d.fault(doing, err)
		}
		// Ownership checked when the database was first reached can have
		// changed since; under the lock nothing is written to tables
		// another role may now change.
		if err := d.checkOwners(ctx, tx); err != nil {
			done()
			d.ready.Store(false)
			return nil, nil, nil, err
		}
	}
	return ctx, tx, done, nil
}

// Changes are serialised by table locks, held to the transaction's end.
// Not advisory locks: taking one needs no privilege at all, so any role
// that may connect could hold mcpseal's key and stall every replica; a
// table lock in EXCLUSIVE mode needs a write privilege on the table (and
// still lets plain reads through).
const (
	pinLockSQL      = `LOCK TABLE mcpseal_pin_events IN EXCLUSIVE MODE`
	auditLockSQL    = `LOCK TABLE mcpseal_audit_events IN EXCLUSIVE MODE`
	sequenceLockSQL = `LOCK TABLE mcpseal_lock_sequences IN EXCLUSIVE MODE`
)

// readOnly is the options of a transaction that reads one snapshot.
var readOnly = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// Close stops watching and closes the pool.
func (d *DB) Close() {
	if d.watch != nil {
		d.watch.stop()
		<-d.watch.done
	}
	d.pool.Close()
}

// Name returns the database's redacted connection string.
func (d *DB) Name() string { return d.name }

func checkVersion(v int) error {
	switch {
	case v > len(migrations):
		return fmt.Errorf("%w: the database has version %d, this mcpseal knows up to %d; upgrade mcpseal", ErrSchemaNewer, v, len(migrations))
	case v < len(migrations):
		return fmt.Errorf("%w (the database has version %d, this mcpseal needs %d)", ErrSchemaOld, v, len(migrations))
	}
	return nil
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// version reads the schema version; 0 when there is no schema.
func (d *DB) version(ctx context.Context, q querier) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('mcpseal_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, d.fault("reading the schema version", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	err := q.QueryRow(ctx, `SELECT version FROM mcpseal_schema`).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, d.fault("reading the schema version", err)
	}
	return v, nil
}

// ErrForeignOwner: a table of mcpseal's schema is owned by a role other
// than the one mcpseal connects as (or a group role only it belongs to),
// or another role holds a write privilege on it.
var ErrForeignOwner = errors.New("pgstate: a mcpseal table is owned by another role, or others may write it")

// tables are the schema's tables.
var tables = []string{"mcpseal_schema", "mcpseal_pin_events", "mcpseal_pin_records", "mcpseal_pin_seen",
	"mcpseal_audit_events", "mcpseal_audit_head", "mcpseal_lock_sequences", "mcpseal_tlog_seen",
	"mcpseal_audit_cursors", "mcpseal_ended_sessions"}

// foreignTablesSQL counts the tables of $1 that another role could change.
// A table's owner may rewrite it, add triggers to it or grant it to
// anyone, whatever mcpseal's own grants are, so the owner must be the role
// mcpseal connects as, or a group role that cannot log in and whose only
// member is that role (every member of a group has the owner's rights). And
// no role but those may hold a privilege that changes the table or what
// happens on it (INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER, REFERENCES),
// PUBLIC included (grantee 0). A superuser's connection is no exception:
// it does not make another role's tables mcpseal's.
const foreignTablesSQL = `WITH me AS (SELECT oid FROM pg_roles WHERE rolname = current_user)
	SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, me
	WHERE n.nspname = current_schema() AND c.relname = ANY($1)
	AND (
		(c.relowner <> me.oid AND NOT (
			EXISTS (SELECT 1 FROM pg_roles g WHERE g.oid = c.relowner AND NOT g.rolcanlogin)
			AND EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.roleid = c.relowner AND m.member = me.oid)
			AND NOT EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.roleid = c.relowner AND m.member <> me.oid)))
		OR EXISTS (SELECT 1 FROM aclexplode(c.relacl) a
			WHERE a.grantee <> me.oid AND a.grantee <> c.relowner
			AND a.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER', 'REFERENCES')))`

// checkOwners refuses a schema whose tables another role could change
// (foreignTablesSQL). It runs when the database is first reached, inside
// every transaction that changes the state (after its table lock, so a
// change never lands in tables handed away since), and on the watcher's
// poll. The error names neither the table nor the role.
func (d *DB) checkOwners(ctx context.Context, q querier) error {
	var foreign int
	if err := q.QueryRow(ctx, foreignTablesSQL, tables).Scan(&foreign); err != nil {
		return d.fault("reading the tables' owners and grants", err)
	}
	if foreign > 0 {
		return fmt.Errorf("%w: %d of mcpseal's tables in %s are owned by a role mcpseal does not connect as, or other roles may write them; connect as the tables' owner (the role that ran 'mcpseal state migrate'), ALTER TABLE ... OWNER TO it, and REVOKE other roles' write privileges", ErrForeignOwner, foreign, d.name)
	}
	return nil
}

// fault wraps a database error with what was being done, without the
// server's message text beyond its code.
func (d *DB) fault(doing string, err error) error {
	return fmt.Errorf("%s in %s: %w", doing, d.name, scrub(err))
}

// scrub keeps a database error's code and our own text. A PostgreSQL
// error's message can quote data (a row, a value); pgx's connect errors
// can name the host but never the password.
func scrub(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &dbError{code: pe.Code, severity: pe.Severity}
	}
	return err
}

type dbError struct{ code, severity string }

func (e *dbError) Error() string {
	return "database error " + e.severity + " SQLSTATE " + e.code
}

// SQLState returns the error's SQLSTATE code.
func (e *dbError) SQLState() string { return e.code }

// schemaLock is the advisory lock key of schema changes (migrate runs
// before the tables it would lock exist): fixed, so that every replica and
// every version takes the same lock.
const schemaLock int64 = 0x6d6370_7365616c // "mcpseal" as a number

func itoa(n int) string { return strconv.Itoa(n) }
