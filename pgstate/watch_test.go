package pgstate_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/pin/pintest"
)

// waitMoved waits until id's generation on st leaves was.
func waitMoved(t *testing.T, st *pin.Store, id string, was uint64, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < within {
		if st.Generation(id) != was {
			return time.Since(start)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("the generation of %s did not move within %v", id, within)
	return 0
}

// TestChangeNotifiedToOtherReplicas: a change committed through one
// handle moves the generation another handle's sessions check, through
// LISTEN/NOTIFY, well under a second.
func TestChangeNotifiedToOtherReplicas(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	a := openDB(t, dsn).Pins()
	bdb := openDB(t, dsn)
	bdb.Watch(slog.New(slog.DiscardHandler))
	b := bdb.Pins()
	id := pintest.ID("alpha")
	time.Sleep(100 * time.Millisecond) // let the listener connect
	was := b.Generation(id.ID)
	if _, err := a.Observe(id, pin.Observation{ClientVersion: "2025-06-18"}, pintest.Contract(t, "v1"), pin.Guard, time.Now()); err != nil {
		t.Fatal(err)
	}
	d := waitMoved(t, b, id.ID, was, time.Second)
	t.Logf("notified in %v", d)
	if openDB(t, dsn).Pins().Generation(id.ID) != 0 {
		t.Error("a store that does not watch reports a moving generation")
	}
}

// TestLostNotificationCaughtByPoll: a change that sent no notification (a
// row written by hand, a notification lost) is caught by the fallback
// poll within a second.
func TestLostNotificationCaughtByPoll(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	db := openDB(t, dsn)
	db.Watch(slog.New(slog.DiscardHandler))
	st := db.Pins()
	time.Sleep(2 * 500 * time.Millisecond) // the poll has read the head once
	was := st.Generation("0123456789abcdef")
	exec(t, dsn, `INSERT INTO mcpseal_pin_events (seq, line) VALUES (1, 'x')`)
	d := waitMoved(t, st, "0123456789abcdef", was, time.Second+100*time.Millisecond)
	t.Logf("polled in %v", d)
}
