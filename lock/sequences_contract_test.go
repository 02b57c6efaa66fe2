package lock_test

import (
	"path/filepath"
	"testing"

	"github.com/mcpseal/mcpseal/lock"
	"github.com/mcpseal/mcpseal/lock/sequencetest"
)

// TestSequenceStoreContract runs the sequence store suite against the
// host's file; pgstate runs it against PostgreSQL.
func TestSequenceStoreContract(t *testing.T) {
	t.Parallel()
	sequencetest.Run(t, func(t *testing.T) func(*testing.T) lock.SequenceStore {
		path := filepath.Join(t.TempDir(), "sequences.json")
		return func(*testing.T) lock.SequenceStore { return lock.FileSequences(path) }
	})
}
