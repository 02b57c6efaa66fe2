package pgstate_test

import (
	"context"
	"testing"
	"time"
)

// TestEndedSessionsSharedAndBounded: an id one replica ended is ended for
// another; an expired row is deleted when the next id is ended.
func TestEndedSessionsSharedAndBounded(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	a, b := openDB(t, dsn).EndedSessions(), openDB(t, dsn).EndedSessions()
	if ended, err := b.Ended("k1"); err != nil || ended {
		t.Fatalf("before: %v %v", ended, err)
	}
	if err := a.End("old", time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := a.End("k1", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if ended, err := b.Ended("k1"); err != nil || !ended {
		t.Fatalf("the other replica does not see the ended id: %v %v", ended, err)
	}
	conn := connect(t, dsn)
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM mcpseal_ended_sessions`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows %d (%v), want 1: the expired one is kept", n, err)
	}
}
