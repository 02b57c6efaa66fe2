package tlog

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps the log a format package: it knows contracts and digests, never the crawler, the site, the gate or the commands.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "tlog", "contract", "canon", "jsonrpc", "internal/atomicfile")
}
