package oauth

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps the resource server below the transports: it
// reads the host's file with the policy's strict decoder and knows nothing
// of the gateway, the gate or MCP.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "oauth", "policy", "contract", "canon", "jsonrpc", "internal/atomicfile")
}
