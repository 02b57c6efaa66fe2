package crawl

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps the crawler on the log and the framing: it never touches the pin store or the gate.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "crawl", "tlog", "contract", "canon", "jsonrpc", "launch", "internal/atomicfile")
}
