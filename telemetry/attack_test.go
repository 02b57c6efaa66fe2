package telemetry

import (
	"io"
	"net/http"
	"testing"
)

// TestAttackMetricsDNSRebinding: the metrics endpoint answers whatever
// Host a request names. A web page the user visits rebinds its own name
// to 127.0.0.1 and reads /metrics from the browser: the tool label holds
// the (reduced) names of the tools this user called and how often. The
// MCP front door refuses a foreign Host (PROTOCOL.md: DNS-rebinding
// protection); the metrics endpoint should too (loopback Host only,
// unless an address beyond loopback was given).
func TestAttackMetricsDNSRebinding(t *testing.T) {
	t.Parallel()
	tel, err := Start(Config{MetricsListen: "127.0.0.1:0", Getenv: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	req, err := http.NewRequest(http.MethodGet, "http://"+tel.MetricsAddr().String()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "attacker.example:9464"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		t.Fatalf("a request with Host attacker.example got the metrics (%d bytes)", len(body))
	}
}
