package telemetry

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// TestOTLPMetricsPush: with an endpoint and traces off, the meters are
// pushed over OTLP/HTTP as cumulative sums, gauges and histograms, decoded
// here with the official protobuf, and once more at Close.
func TestOTLPMetricsPush(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []*colmetricspb.ExportMetricsServiceRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		var m colmetricspb.ExportMetricsServiceRequest
		if r.URL.Path != "/v1/metrics" || proto.Unmarshal(body, &m) != nil {
			http.Error(w, "not OTLP/HTTP metrics", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, &m)
		mu.Unlock()
	}))
	defer srv.Close()
	tel, err := Start(Config{OTLPEndpoint: srv.URL, Getenv: envOf(map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_METRIC_EXPORT_INTERVAL": "100"})})
	if err != nil || tel == nil {
		t.Fatalf("%v %v", tel, err)
	}
	if tel.tp != nil {
		t.Fatal("traces on with OTEL_TRACES_EXPORTER=none")
	}
	tel.m.requests.Inc("tools/call", "ok")
	tel.m.requests.Inc("tools/call", "ok")
	tel.m.upstream.Observe(0.002, "tools/call")
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := tel.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 2 {
		t.Fatalf("%d pushes, want one on the interval and one at Close", len(got))
	}
	byName := map[string]*metricspb.Metric{}
	for _, m := range got[len(got)-1].ResourceMetrics[0].ScopeMetrics[0].Metrics {
		byName[m.Name] = m
	}
	req := byName["mcpseal_requests_total"].GetSum()
	if req == nil || !req.IsMonotonic || req.AggregationTemporality != metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE ||
		len(req.DataPoints) != 1 || req.DataPoints[0].GetAsInt() != 2 || len(req.DataPoints[0].Attributes) != 2 {
		t.Fatalf("requests: %v", byName["mcpseal_requests_total"])
	}
	h := byName["mcpseal_upstream_duration_seconds"].GetHistogram()
	if h == nil || h.DataPoints[0].Count != 1 || len(h.DataPoints[0].BucketCounts) != len(h.DataPoints[0].ExplicitBounds)+1 || byName["mcpseal_upstream_duration_seconds"].Unit != "s" {
		t.Fatalf("histogram: %v", byName["mcpseal_upstream_duration_seconds"])
	}
	if byName["mcpseal_sessions_open"].GetGauge() == nil {
		t.Fatal("sessions_open is not a gauge")
	}
	if len(byName) != 14 {
		t.Errorf("%d metrics pushed, want the 14 documented", len(byName))
	}
}
