package pin

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps the store below the gate: it may use the format
// packages (contract, canon) and nothing else of mcpseal.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "pin", "contract", "canon", "internal/atomicfile")
}
