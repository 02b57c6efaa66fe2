package audit

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps the audit log below the gate: it may use the format
// packages (contract, canon) and nothing else of mcpseal; it knows
// nothing of the policy or the gate, which hand it events.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "audit", "contract", "canon", "internal/atomicfile")
}
