package telemetry

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps telemetry a reader of the gate: it sees the
// gate's frames and events, and imports nothing of mcpseal beyond the
// gate and what the gate itself imports (no audit log, no transport, no
// command).
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "telemetry", "gate", "contract", "jsonrpc", "pin", "policy", "canon", "internal/atomicfile", "internal/otlp", "internal/pbwire")
}

// TestBinaryLinksNoHeavyClients: the gRPC library, the Prometheus Go
// client, the protobuf runtime and the OTLP message types stay out of the
// mcpseal binary (tests may use them as real peers and references): their
// package initialisation costs every process megabytes, or reads the
// executable (protobuf's internal/detrand), whether telemetry is on or not
// (see otlp.go, exposition.go, otlpmetrics.go).
func TestBinaryLinksNoHeavyClients(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/mcpseal/mcpseal/cmd/mcpseal").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "google.golang.org/grpc") || strings.HasPrefix(p, "github.com/prometheus/client_golang") ||
			strings.HasPrefix(p, "google.golang.org/protobuf") || strings.HasPrefix(p, "go.opentelemetry.io/proto") {
			t.Errorf("the binary links %s", p)
		}
	}
}
