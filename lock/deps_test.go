package lock

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps lock low in the tree: the session gate and the
// commands build on it, never the other way round.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "lock", "contract", "canon", "pkgpin", "sshsig", "internal/atomicfile")
}
