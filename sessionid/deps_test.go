package sessionid_test

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps the sealed id a pure format package.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "sessionid")
}
