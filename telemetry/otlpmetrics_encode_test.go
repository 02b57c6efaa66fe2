package telemetry

import (
	"bytes"
	"math"
	"testing"
	"unicode/utf8"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"
)

// The reference: the OTLP message types and proto.Marshal, as the pusher
// built its message before it was encoded by hand.

type referenceMeter interface {
	referenceOTLP(start, now uint64) *metricspb.Metric
}

func referenceResourceMetrics(service string, reg *registry, start, now uint64) ([]byte, error) {
	rm := &metricspb.ResourceMetrics{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{referenceKV("service.name", service)}},
		ScopeMetrics: []*metricspb.ScopeMetrics{{
			Scope:   &commonpb.InstrumentationScope{Name: "github.com/mcpseal/mcpseal/telemetry"},
			Metrics: reg.referenceOTLP(start, now),
		}},
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(rm)
}

func referenceKV(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// attrs are a series' label pairs as OTLP attributes.
func (f *family) referenceAttrs(l labels) []*commonpb.KeyValue {
	out := make([]*commonpb.KeyValue, len(f.labels))
	for i, name := range f.labels {
		out[i] = referenceKV(name, l[i])
	}
	return out
}

// otlp returns every meter as an OTLP metric, cumulative since start.
func (r *registry) referenceOTLP(start, now uint64) []*metricspb.Metric {
	r.mu.Lock()
	meters := append([]meter(nil), r.meters...)
	r.mu.Unlock()
	out := make([]*metricspb.Metric, 0, len(meters))
	for _, m := range meters {
		out = append(out, m.(referenceMeter).referenceOTLP(start, now))
	}
	return out
}

func (c *counterVec) referenceOTLP(start, now uint64) *metricspb.Metric {
	keys, vals := c.series.sorted()
	pts := make([]*metricspb.NumberDataPoint, len(keys))
	for i, k := range keys {
		pts[i] = &metricspb.NumberDataPoint{Attributes: c.referenceAttrs(k), StartTimeUnixNano: start, TimeUnixNano: now,
			Value: &metricspb.NumberDataPoint_AsInt{AsInt: int64(vals[i].Load())}}
	}
	return &metricspb.Metric{Name: c.name, Description: c.help, Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
		DataPoints: pts, AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, IsMonotonic: true}}}
}

func (g *gauge) referenceOTLP(_, now uint64) *metricspb.Metric {
	return &metricspb.Metric{Name: g.name, Description: g.help, Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{
		DataPoints: []*metricspb.NumberDataPoint{{TimeUnixNano: now, Value: &metricspb.NumberDataPoint_AsInt{AsInt: g.v.Load()}}}}}}
}

func (g *funcMeter) referenceOTLP(start, now uint64) *metricspb.Metric {
	pt := &metricspb.NumberDataPoint{TimeUnixNano: now, Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: g.f()}}
	if g.counter {
		pt.StartTimeUnixNano = start
		return &metricspb.Metric{Name: g.name, Description: g.help, Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
			DataPoints: []*metricspb.NumberDataPoint{pt}, AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, IsMonotonic: true}}}
	}
	return &metricspb.Metric{Name: g.name, Description: g.help, Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: []*metricspb.NumberDataPoint{pt}}}}
}

func (h *histogramVec) referenceOTLP(start, now uint64) *metricspb.Metric {
	keys, vals := h.series.sorted()
	pts := make([]*metricspb.HistogramDataPoint, len(keys))
	for i, k := range keys {
		hs := vals[i]
		hs.mu.Lock()
		counts := append([]uint64(nil), hs.counts...) // per bucket, as OTLP wants them
		sum, n := hs.sum, hs.n
		hs.mu.Unlock()
		pts[i] = &metricspb.HistogramDataPoint{Attributes: h.referenceAttrs(k), StartTimeUnixNano: start, TimeUnixNano: now,
			Count: n, Sum: &sum, BucketCounts: counts, ExplicitBounds: h.bounds}
	}
	return &metricspb.Metric{Name: h.name, Description: h.help, Unit: h.unit(), Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
		DataPoints: pts, AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}}}
}

// assertMetricsAsProtoMarshal compares the hand encoder with the reference.
func assertMetricsAsProtoMarshal(t *testing.T, service string, reg *registry, start, now uint64) {
	t.Helper()
	want, werr := referenceResourceMetrics(service, reg, start, now)
	got, err := appendResourceMetrics([]byte("kept"), service, reg, start, now)
	if (err != nil) != (werr != nil) {
		t.Fatalf("error %v, proto.Marshal %v", err, werr)
	}
	if err != nil {
		return
	}
	if !bytes.HasPrefix(got, []byte("kept")) {
		t.Fatal("the encoder did not append")
	}
	if got = got[4:]; !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%x\nproto.Marshal\n%x", got, want)
	}
}

// TestMetricsEncodingIsProtoMarshals: mcpseal's own meters, empty and
// then with series, and every kind of meter at its edges (zero values,
// which proto3 leaves out except in oneofs and set optionals; lengths
// past one varint byte; no labels), encode to proto.Marshal's bytes.
func TestMetricsEncodingIsProtoMarshals(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	assertMetricsAsProtoMarshal(t, "mcpseal", m.reg, 1, 2)
	m.requests.Inc("tools/call", "ok")
	m.requests.Inc("tools/call", "ok")
	m.requests.Inc("tools/list", "blocked")
	m.upstream.Observe(0.002, "tools/call")
	m.upstream.Observe(7, "tools/call")
	m.upstream.Observe(0.5, "initialize")
	assertMetricsAsProtoMarshal(t, "mcpseal", m.reg, 1764600000000000000, 1764600060000000000)
	assertMetricsAsProtoMarshal(t, "", m.reg, 0, 0)

	var r registry
	r.counter("c_total", "")
	r.counter("c2_total", "a help", "one", "two").Inc("", "x")
	g := r.gauge("g", "gauge")
	g.Dec()
	r.gaugeFunc("f", "zero", false, func() float64 { return 0 })
	r.gaugeFunc("f_total", "neg zero", true, func() float64 { return math.Copysign(0, -1) })
	r.gaugeFunc("nan", "", false, math.NaN)
	r.histogram("h_seconds", "", nil, "l").Observe(0, "")
	r.histogram("h", string(make([]byte, 300)), []float64{-1, 0, 1e300}, "l").Observe(math.Inf(1), "v")
	assertMetricsAsProtoMarshal(t, "svc", &r, 0, 5)
}

// TestMetricsEncodingRefusesInvalidUTF8 as proto.Marshal does: a label
// value that is not UTF-8 fails the push.
func TestMetricsEncodingRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	var r registry
	r.counter("c_total", "", "tool").Inc("\xff")
	if _, err := appendResourceMetrics(nil, "mcpseal", &r, 1, 2); err == nil {
		t.Fatal("no error")
	}
	assertMetricsAsProtoMarshal(t, "mcpseal", &r, 1, 2)
}

// FuzzMetricsEncoding: any names, label values, counts and observations
// encode to proto.Marshal's bytes, or fail where it fails.
func FuzzMetricsEncoding(f *testing.F) {
	f.Add("mcpseal", "tools/call", "ok", uint8(3), 0.002, int64(-1), uint64(1), uint64(2))
	f.Add("", "", "", uint8(0), 0.0, int64(0), uint64(0), uint64(0))
	f.Add("s\xff", "\x00", string(make([]byte, 200)), uint8(200), math.Inf(-1), int64(math.MinInt64), uint64(math.MaxUint64), uint64(1))
	f.Fuzz(func(t *testing.T, service, a, b string, n uint8, obs float64, level int64, start, now uint64) {
		var r registry
		c := r.counter("requests_total", a, "method", "outcome")
		for i := 0; i < int(n); i++ {
			c.Inc(a, b)
		}
		c.Inc(b, a)
		g := r.gauge(b, "")
		g.v.Store(level)
		r.gaugeFunc("up", b, n%2 == 0, func() float64 { return obs })
		h := r.histogram("upstream_seconds", "", []float64{0.001, 0.01, 1}, "method")
		h.Observe(obs, a)
		h.Observe(float64(n), b)
		assertMetricsAsProtoMarshal(t, service, &r, start, now)
		if utf8.ValidString(service) && utf8.ValidString(a) && utf8.ValidString(b) {
			if _, err := appendResourceMetrics(nil, service, &r, start, now); err != nil {
				t.Fatal(err)
			}
		}
	})
}
