package pgstate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/internal/pgtest"
	"github.com/mcpseal/mcpseal/pgstate"
)

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	if _, err := pgstate.Open(ctx, dsn, pgstate.Options{}); !errors.Is(err, pgstate.ErrSchemaOld) {
		t.Fatalf("Open before migrate: %v, want ErrSchemaOld", err)
	}
	from, to, err := pgstate.Migrate(ctx, dsn)
	if err != nil || from != 0 || to != pgstate.Version() {
		t.Fatalf("Migrate: %d→%d, %v", from, to, err)
	}
	from, to, err = pgstate.Migrate(ctx, dsn)
	if err != nil || from != pgstate.Version() || to != pgstate.Version() {
		t.Fatalf("Migrate again: %d→%d, %v", from, to, err)
	}
	openDB(t, dsn)
}

func TestConcurrentMigrations(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	errs := make(chan error, 3)
	for range 3 {
		go func() { _, _, err := pgstate.Migrate(context.Background(), dsn); errs <- err }()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("Migrate: %v", err)
		}
	}
	openDB(t, dsn)
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	exec(t, dsn, `UPDATE mcpseal_schema SET version = version + 1`)
	_, err := pgstate.Open(context.Background(), dsn, pgstate.Options{})
	if !errors.Is(err, pgstate.ErrSchemaNewer) || !strings.Contains(err.Error(), "upgrade mcpseal") {
		t.Fatalf("Open of a newer schema: %v", err)
	}
	if _, _, err := pgstate.Migrate(context.Background(), dsn); !errors.Is(err, pgstate.ErrSchemaNewer) {
		t.Fatalf("Migrate of a newer schema: %v", err)
	}
}

// TestPasswordInURLRefused: a password on the command line ends up in
// process listings and shell history; it must come from libpq's sources.
func TestPasswordInURLRefused(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"postgres://mcpseal:hunter2@127.0.0.1/db",
		"postgres://mcpseal@127.0.0.1/db?password=hunter2",
	} {
		_, err := pgstate.Open(context.Background(), dsn, pgstate.Options{})
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "PGPASSWORD") {
			t.Errorf("Open(%q): %v", pgstate.Redact(dsn), err)
		}
	}
	if got := pgstate.Redact("postgres://u:hunter2@h:5432/db?sslmode=verify-full&password=x"); got != "postgres://u@h:5432/db" {
		t.Errorf("Redact: %s", got)
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("postgres://u:secret@h:5432/db?password=secret")
	f.Add("postgresql://h/db")
	f.Add("postgres://%zz")
	f.Fuzz(func(t *testing.T, dsn string) {
		got := pgstate.Redact(dsn)
		if strings.Contains(dsn, "secret") && strings.Contains(got, "secret") && !strings.Contains(dsn, "@") {
			return
		}
		if strings.Contains(got, ":secret@") || strings.Contains(got, "password") {
			t.Fatalf("Redact(%q) = %q", dsn, got)
		}
	})
}
