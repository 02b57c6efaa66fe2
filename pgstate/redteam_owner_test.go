package pgstate_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mcpseal/mcpseal/pgstate"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/pin/pintest"
)

var rtTables = []string{"mcpseal_schema", "mcpseal_pin_events", "mcpseal_pin_records", "mcpseal_pin_seen",
	"mcpseal_audit_events", "mcpseal_audit_head", "mcpseal_lock_sequences", "mcpseal_tlog_seen"}

func rtRun(t *testing.T, conn *pgx.Conn, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := conn.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// rtOther connects to dsn's database as a login role of its own.
func rtOther(t *testing.T, dsn, role string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.User, cfg.Password = role, "rt-password"
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// TestAttackTablesOwnedBySharedGroupRole: the owner check lets a table be
// owned by any role mcpseal is "directly a member of". Such a role is
// usually a group role, and a group has other members: here a reporting
// login that is also in the group. The tables are handed to the group;
// Open accepts; the other member, connecting as itself, has every right of
// the owner and empties the pin chain (or adds a trigger, or grants the
// table to anyone): exactly what the check was written to refuse.
func TestAttackTablesOwnedBySharedGroupRole(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	st := openDB(t, dsn).Pins()
	base := pin.Observation{ClientVersion: "2025-06-18", Protocol: "2025-06-18"}
	attackObserve(t, st, pintest.ID("alpha"), base, "v1", pin.FirstPin)
	ctx := context.Background()
	conn := connect(t, dsn)
	defer conn.Close(ctx)
	rtRun(t, conn,
		`DO $$ BEGIN CREATE ROLE rt14_owners NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
		`DO $$ BEGIN CREATE ROLE rt14_reporting LOGIN PASSWORD 'rt-password'; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
		`GRANT rt14_owners TO CURRENT_USER`,
		`GRANT rt14_owners TO rt14_reporting`,
	)
	for _, tb := range rtTables {
		rtRun(t, conn, `ALTER TABLE `+tb+` OWNER TO rt14_owners`)
	}
	d, err := pgstate.Open(ctx, dsn, pgstate.Options{MaxConns: 2})
	if err != nil {
		t.Logf("held: Open refused: %v", err)
		return
	}
	defer d.Close()
	other := rtOther(t, dsn, "rt14_reporting")
	if _, err := other.Exec(ctx, `DELETE FROM mcpseal_pin_events`); err != nil {
		t.Fatalf("harness: the other member cannot write: %v", err)
	}
	if _, err := other.Exec(ctx, `DELETE FROM mcpseal_pin_records`); err != nil {
		t.Fatalf("harness: %v", err)
	}
	t.Fatal("Open accepted tables owned by a group role that another login role is also a member of; that role just emptied the pin chain and records as their owner")
}

// TestAttackTablesOwnedButGrantedToPublic: the tables are owned by
// mcpseal's role, as the check wants, but ALL on them (TRIGGER, UPDATE,
// DELETE, TRUNCATE) is granted to PUBLIC. Every role in the cluster can
// rewrite the state or hang a trigger on it; the check looks only at the
// owner and Open accepts.
func TestAttackTablesOwnedButGrantedToPublic(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	ctx := context.Background()
	conn := connect(t, dsn)
	defer conn.Close(ctx)
	rtRun(t, conn, `DO $$ BEGIN CREATE ROLE rt14_anyone LOGIN PASSWORD 'rt-password'; EXCEPTION WHEN duplicate_object THEN NULL; END $$`)
	for _, tb := range rtTables {
		rtRun(t, conn, `GRANT ALL ON `+tb+` TO PUBLIC`)
	}
	d, err := pgstate.Open(ctx, dsn, pgstate.Options{MaxConns: 2})
	if err != nil {
		t.Logf("held: Open refused: %v", err)
		return
	}
	defer d.Close()
	other := rtOther(t, dsn, "rt14_anyone")
	if _, err := other.Exec(ctx, `TRUNCATE mcpseal_audit_events, mcpseal_audit_head`); err != nil {
		t.Fatalf("harness: %v", err)
	}
	t.Fatal("Open accepted tables that every role may write (ALL granted to PUBLIC); an unrelated role just truncated the audit log")
}

// TestAttackTablesHandedAwayAfterOpen: the owner check runs once, when a
// process opens the database (or first reaches it). Replicas run for
// weeks; a table handed to another role afterwards (ALTER TABLE ... OWNER
// TO) is never noticed: the running replicas keep trusting tables the
// other role may now rewrite, hang triggers on, or grant to anyone.
func TestAttackTablesHandedAwayAfterOpen(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	d := openDB(t, dsn)
	st := d.Pins()
	base := pin.Observation{ClientVersion: "2025-06-18", Protocol: "2025-06-18"}
	attackObserve(t, st, pintest.ID("alpha"), base, "v1", pin.FirstPin)
	ctx := context.Background()
	conn := connect(t, dsn)
	defer conn.Close(ctx)
	rtRun(t, conn, `DO $$ BEGIN CREATE ROLE rt14_thief NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`)
	for _, tb := range rtTables {
		// The new owner keeps mcpseal's access so that nothing fails.
		rtRun(t, conn, `ALTER TABLE `+tb+` OWNER TO rt14_thief`, `GRANT ALL ON `+tb+` TO CURRENT_USER`)
	}
	res, err := st.Observe(pintest.ID("beta"), base, pintest.Contract(t, "v1"), pin.Guard, attackT0)
	if err == nil && res.Outcome == pin.FirstPin {
		t.Fatal("after every table was handed to another role, the running process still pins into them (the owner check ran only at open)")
	}
}
