package site

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps the site a reader of the log: it never reaches the pin store, the gate or the crawler.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "site", "tlog", "contract", "canon", "jsonrpc", "internal/atomicfile")
}
