package policy

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps the policy below the gate: it may use the format
// packages (contract, canon) and nothing else of mcpseal. The gate calls
// the policy, never the other way round.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "policy", "contract", "canon", "internal/atomicfile")
}
