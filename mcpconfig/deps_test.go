package mcpconfig

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps mcpconfig low in the tree: the session gate and the
// commands build on it, never the other way round.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "mcpconfig", "canon", "internal/atomicfile", "internal/launchline")
}
