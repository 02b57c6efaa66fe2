package pgstate_test

import (
	"testing"

	"github.com/mcpseal/mcpseal/lock"
	"github.com/mcpseal/mcpseal/lock/sequencetest"
	"github.com/mcpseal/mcpseal/tlog"
	"github.com/mcpseal/mcpseal/tlog/tlogtest"
)

// TestSequenceStoreContract runs the lock sequence suite (the one the
// host's file passes) against PostgreSQL.
func TestSequenceStoreContract(t *testing.T) {
	t.Parallel()
	sequencetest.Run(t, func(t *testing.T) func(*testing.T) lock.SequenceStore {
		dsn := freshDB(t)
		return func(t *testing.T) lock.SequenceStore { return openDB(t, dsn).Sequences() }
	})
}

// TestSeenStoreContract runs the seen-checkpoint suite (the one the files
// pass) against PostgreSQL.
func TestSeenStoreContract(t *testing.T) {
	t.Parallel()
	tlogtest.RunSeenStore(t, func(t *testing.T) (func(*testing.T) tlog.SeenStore, func(*testing.T, []byte)) {
		dsn := freshDB(t)
		return func(t *testing.T) tlog.SeenStore { return openDB(t, dsn).Seen() },
			func(t *testing.T, note []byte) { exec(t, dsn, `UPDATE mcpseal_tlog_seen SET note = $1`, note) }
	})
}
