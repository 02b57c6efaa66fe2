package telemetry

import (
	"bytes"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestExpositionParses: what the registry writes is read back by the
// Prometheus text parser with the values that were recorded.
func TestExpositionParses(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	m.requests.Inc("tools/call", "ok")
	m.requests.Inc("tools/call", "ok")
	m.refusals.Inc(m.codes.value(`we"ird\code` + "\n"))
	m.upstream.Observe(0.003, "tools/call")
	m.upstream.Observe(100, "tools/call")
	m.sessions.Inc()
	var b bytes.Buffer
	if err := m.reg.writeTo(&b); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if got := fams["mcpseal_requests_total"].GetMetric()[0].GetCounter().GetValue(); got != 2 {
		t.Errorf("requests = %v", got)
	}
	h := fams["mcpseal_upstream_duration_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 100.003 {
		t.Errorf("histogram count %d sum %v", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, bk := range h.GetBucket() {
		want := uint64(0)
		switch {
		case bk.GetUpperBound() > 100:
			want = 2
		case bk.GetUpperBound() >= 0.003:
			want = 1
		}
		if bk.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v: %d, want %d", bk.GetUpperBound(), bk.GetCumulativeCount(), want)
		}
	}
	if v := fams["mcpseal_sessions_open"].GetMetric()[0].GetGauge().GetValue(); v != 1 {
		t.Errorf("sessions %v", v)
	}
	if l := fams["mcpseal_refusals_total"].GetMetric()[0].GetLabel()[0].GetValue(); l != "we_ird_code_" {
		t.Errorf("code label %q", l)
	}
}

// TestMetersDoNotAllocate: once a series exists, counting and observing
// allocate nothing (they run on every call).
func TestMetersDoNotAllocate(t *testing.T) {
	m := newMetrics()
	m.requests.Inc("tools/call", "ok")
	m.upstream.Observe(0.001, "tools/call")
	if n := testing.AllocsPerRun(100, func() {
		m.requests.Inc("tools/call", "ok")
		m.upstream.Observe(0.001, "tools/call")
		m.sessions.Inc()
	}); n != 0 {
		t.Fatalf("%v allocations per count", n)
	}
}
