package lookup

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps the lookup server read-only over the log and the pin store: no gate, no transports, no crawler.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "lookup", "tlog", "pin", "contract", "canon", "jsonrpc", "internal/atomicfile")
}
