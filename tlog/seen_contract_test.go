package tlog_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpseal/mcpseal/tlog"
	"github.com/mcpseal/mcpseal/tlog/tlogtest"
)

// TestSeenStoreContract runs the seen-checkpoint suite against the files;
// pgstate runs it against PostgreSQL.
func TestSeenStoreContract(t *testing.T) {
	t.Parallel()
	tlogtest.RunSeenStore(t, func(t *testing.T) (func(*testing.T) tlog.SeenStore, func(*testing.T, []byte)) {
		home := t.TempDir()
		s := tlog.SeenDir(home)
		return func(*testing.T) tlog.SeenStore { return tlog.SeenDir(home) },
			func(t *testing.T, note []byte) {
				files, err := filepath.Glob(filepath.Join(s.Dir, "*"))
				if err != nil || len(files) != 1 {
					t.Fatalf("seen files %v, %v", files, err)
				}
				if err := os.WriteFile(files[0], note, 0o600); err != nil {
					t.Fatal(err)
				}
			}
	})
}
