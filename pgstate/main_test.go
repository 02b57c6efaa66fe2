package pgstate_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mcpseal/mcpseal/internal/pgtest"
	"github.com/mcpseal/mcpseal/pgstate"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// freshDB returns a migrated fresh database.
func freshDB(t *testing.T) string {
	t.Helper()
	dsn := pgtest.DSN(t)
	if _, _, err := pgstate.Migrate(context.Background(), dsn); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return dsn
}

func openDB(t *testing.T, dsn string) *pgstate.DB {
	t.Helper()
	d, err := pgstate.Open(context.Background(), dsn, pgstate.Options{MaxConns: 4})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(d.Close)
	return d
}

// exec runs sql on dsn's database as its owner would by hand.
func exec(t *testing.T, dsn, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, dsn)
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if tag.RowsAffected() != 1 {
		t.Fatalf("%s: %d rows", sql, tag.RowsAffected())
	}
}

// queryRow reads one row of sql on dsn's database into dest.
func queryRow(t *testing.T, dsn, sql string, args []any, dest ...any) {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, dsn)
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, sql, args...).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// connect opens one connection to dsn's database.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}
