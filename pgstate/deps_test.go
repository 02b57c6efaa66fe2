package pgstate_test

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps the state database beside the stores it holds:
// it may use them (pin, audit, lock, tlog) and what they use, never the
// gate or a transport.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "pgstate", "pin", "audit", "lock", "tlog", "pkgpin", "sshsig", "jsonrpc", "contract", "canon", "internal/atomicfile")
}
