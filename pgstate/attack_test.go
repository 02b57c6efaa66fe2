package pgstate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/pgstate"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/pin/pintest"
)

var attackT0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func attackObserve(t *testing.T, st *pin.Store, id pin.Identity, o pin.Observation, desc string, want pin.Outcome) pin.Result {
	t.Helper()
	res, err := st.Observe(id, o, pintest.Contract(t, desc), pin.Guard, attackT0)
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	if res.Outcome != want {
		t.Fatalf("Observe: outcome %v, want %v", res.Outcome, want)
	}
	return res
}

// TestAttackAuditForgedTailAbsorbed: in the database the head row moves
// in the same transaction as the rows, so a head that trails the last row
// can never be an interrupted append. Yet VerifyAudit uses the file log's
// tolerance ("the head trails the log by an interrupted append", a note):
// rows appended by hand that chain (audit.EncodeAfter, no key needed)
// verify, and the next real append moves the head past them, leaving no
// trace at all.
func TestAttackAuditForgedTailAbsorbed(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	d := openDB(t, dsn)
	if err := d.Audit().AppendAll([]audit.Event{{Op: audit.OpList, Outcome: audit.Allowed}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var line []byte
	if err := conn.QueryRow(ctx, `SELECT line FROM mcpseal_audit_events WHERE seq = 1`).Scan(&line); err != nil {
		t.Fatal(err)
	}
	forged, _, err := audit.EncodeAfter([]audit.Event{{Op: audit.OpCall, Outcome: audit.Refused, Code: "denied", Tool: "transfer_funds"}}, 1, audit.LineHash(line), attackT0)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, dsn, `INSERT INTO mcpseal_audit_events (seq, line) VALUES (2, $1)`, forged[0])
	if rep, err := d.VerifyAudit(ctx); err != nil || rep.OK() {
		t.Errorf("a row appended by hand (head not moved) verifies: %+v %v", rep, err)
	}
	if err := d.Audit().AppendAll([]audit.Event{{Op: audit.OpList, Outcome: audit.Allowed}}); err != nil {
		t.Fatal(err)
	}
	if rep, err := d.VerifyAudit(ctx); err != nil || rep.OK() {
		t.Fatalf("after the next append the forged row is part of the fleet's log: ok=%v notes=%v", rep.OK(), rep.Notes)
	}
}

// TestAttackSearchPathShadowSchema: every query names its tables without
// a schema, so they resolve through search_path, whose default is
// "$user", public. Another role that may create schemas in the database
// (CREATE on it: common for application roles sharing a database)
// creates a schema named after mcpseal's role, with tables of the same
// names that it owns, and grants mcpseal access. From the next
// connection every replica reads and writes the other role's tables: an
// empty pin store of the attacker's choosing, where a pinned server's rug
// pull is a first use. mcpseal's own tables (and their chain) are never
// read again, so nothing fails verification.
func TestAttackSearchPathShadowSchema(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	base := pin.Observation{ClientVersion: "2025-06-18", Protocol: "2025-06-18"}
	id := pintest.ID("alpha")
	attackObserve(t, openDB(t, dsn).Pins(), id, base, "v1", pin.FirstPin)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var me string
	if err := conn.QueryRow(ctx, `SELECT current_user`).Scan(&me); err != nil {
		t.Fatal(err)
	}
	s := pgx.Identifier{me}.Sanitize()
	for _, q := range []string{
		`CREATE ROLE mcpseal_attacker`,
		`CREATE SCHEMA ` + s + ` AUTHORIZATION mcpseal_attacker`,
		`SET ROLE mcpseal_attacker`,
		`CREATE TABLE ` + s + `.mcpseal_schema (one boolean PRIMARY KEY DEFAULT true, version integer NOT NULL)`,
		`CREATE TABLE ` + s + `.mcpseal_pin_events (seq bigint PRIMARY KEY, line bytea NOT NULL)`,
		`CREATE TABLE ` + s + `.mcpseal_pin_records (id text PRIMARY KEY, data bytea NOT NULL)`,
		`CREATE TABLE ` + s + `.mcpseal_pin_seen (id text PRIMARY KEY, at timestamptz NOT NULL)`,
		`INSERT INTO ` + s + `.mcpseal_schema VALUES (true, ` + fmt.Sprint(pgstate.Version()) + `)`,
		`GRANT ALL ON ALL TABLES IN SCHEMA ` + s + ` TO ` + s,
		`RESET ROLE`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			// The role may exist from an earlier run on a shared cluster.
			if q == `CREATE ROLE mcpseal_attacker` {
				continue
			}
			t.Fatalf("%s: %v", q, err)
		}
	}
	res, err := openDB(t, dsn).Pins().Observe(id, base, pintest.Contract(t, "evil"), pin.Guard, attackT0)
	if err == nil && res.Outcome == pin.FirstPin {
		t.Fatal("a schema another role created and owns shadows mcpseal's tables: alpha's rug pull is a first pin")
	}
}

// TestAttackSSLPasswordInURLAccepted: a URL with ?password= is refused so
// that no secret reaches argv, ps or a unit file; ?sslpassword= (the
// passphrase of the client key, which pgx reads as libpq does) is a
// secret of the same kind and is accepted.
func TestAttackSSLPasswordInURLAccepted(t *testing.T) {
	t.Parallel()
	dsn := "postgres://mcpseal@127.0.0.1:1/db?sslmode=disable&sslpassword=hunter2&connect_timeout=1"
	d, err := pgstate.Open(context.Background(), dsn, pgstate.Options{Lazy: true})
	if err == nil {
		d.Close()
		t.Fatal("a URL carrying sslpassword was accepted")
	}
}

// TestAttackAdvisoryLockHeldByUnprivilegedRole: the pin store's writes
// serialise on a fixed advisory lock key (pinLock, "mcpseal" "pins").
// Advisory locks need no privilege: any role that may connect to the
// database (a read-only reporting role, with no grant on any mcpseal
// table) takes the same key and keeps it. Every replica's every new
// session then waits the store's whole timeout and is held: the fleet
// stops, and nothing in mcpseal's tables shows why.
func TestAttackAdvisoryLockHeldByUnprivilegedRole(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `DO $$ BEGIN CREATE ROLE mcpseal_reporting LOGIN PASSWORD 'reporting'; EXCEPTION WHEN duplicate_object THEN NULL; END $$`); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.User, cfg.Password = "mcpseal_reporting", "reporting"
	other, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(0x6d6370_70696e73)); err != nil {
		t.Fatal(err)
	}
	d, err := pgstate.Open(ctx, dsn, pgstate.Options{MaxConns: 4, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.Pins().Observe(pintest.ID("alpha"), pin.Observation{ClientVersion: "2025-06-18", Protocol: "2025-06-18"}, pintest.Contract(t, "v1"), pin.Guard, attackT0)
	if err != nil {
		t.Fatalf("a role with no grant on mcpseal's tables holds every session of the fleet: %v", err)
	}
}

// TestAttackTablesOwnedByAnotherRole: a table of mcpseal's schema is
// handed to another role (which can then rewrite it, add triggers or
// grant it to anyone, whatever mcpseal's grants are). Open refuses.
func TestAttackTablesOwnedByAnotherRole(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE ROLE mcpseal_table_thief`); err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42710" { // duplicate_object: an earlier run on a shared cluster
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `ALTER TABLE mcpseal_audit_head OWNER TO mcpseal_table_thief`); err != nil {
		t.Fatal(err)
	}
	d, err := pgstate.Open(ctx, dsn, pgstate.Options{MaxConns: 2})
	if err == nil {
		d.Close()
		t.Fatal("Open accepted a schema whose table another role owns")
	}
	if !errors.Is(err, pgstate.ErrForeignOwner) || strings.Contains(err.Error(), "thief") {
		t.Fatalf("error %v", err)
	}
	lazy, err := pgstate.Open(ctx, dsn, pgstate.Options{MaxConns: 2, Lazy: true})
	if err == nil {
		defer lazy.Close()
		if _, err := lazy.Pins().Observe(pintest.ID("alpha"), pin.Observation{ClientVersion: "2025-06-18", Protocol: "2025-06-18"}, pintest.Contract(t, "v1"), pin.Guard, attackT0); err == nil {
			t.Fatal("a lazily opened store used tables another role owns")
		}
	}
}
