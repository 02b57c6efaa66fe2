package telemetry

import (
	"context"
	"errors"
	"strconv"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcpseal/mcpseal/internal/otlp"
)

// OTLP metrics: the same meters as the Prometheus endpoint, pushed every
// OTEL_METRIC_EXPORT_INTERVAL (60 s by default), cumulative, and once more
// when mcpseal exits. A push that fails is dropped; the next one carries
// the totals.

const (
	defaultMetricInterval = 60 * time.Second
	minMetricInterval     = 100 * time.Millisecond
	maxMetricInterval     = time.Hour
)

func metricInterval(env func(string) string) (time.Duration, error) {
	v := env("OTEL_METRIC_EXPORT_INTERVAL")
	if v == "" {
		return defaultMetricInterval, nil
	}
	ms, err := strconv.Atoi(v)
	d := time.Duration(ms) * time.Millisecond
	if err != nil || d < minMetricInterval || d > maxMetricInterval {
		return 0, errors.New("OTEL_METRIC_EXPORT_INTERVAL: milliseconds, 100 to 3600000")
	}
	return d, nil
}

// pusher pushes the meters to a collector.
type pusher struct {
	t        *Telemetry
	c        *otlp.Client
	interval time.Duration
	start    uint64
	stop     chan struct{}
	done     chan struct{}
}

func (t *Telemetry) startMetricPush(tc *tracing) error {
	c, err := newOTLPClient(tc, t.getenv)
	if err != nil {
		return err
	}
	iv, err := metricInterval(t.getenv)
	if err != nil {
		return err
	}
	p := &pusher{t: t, c: c, interval: iv, start: uint64(time.Now().UnixNano()), stop: make(chan struct{}), done: make(chan struct{})}
	t.push = p
	go p.run()
	return nil
}

func (p *pusher) run() {
	defer close(p.done)
	tk := time.NewTicker(p.interval)
	defer tk.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tk.C:
			ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
			if err := p.push(ctx); err != nil {
				p.t.exportErr.Handle(err)
			}
			cancel()
		}
	}
}

// close stops the pusher and pushes the totals once more.
func (p *pusher) close(ctx context.Context) error {
	close(p.stop)
	<-p.done
	defer p.c.Close()
	return p.push(ctx)
}

func (p *pusher) push(ctx context.Context) error {
	now := uint64(time.Now().UnixNano())
	rm := &metricspb.ResourceMetrics{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", p.t.service)}},
		ScopeMetrics: []*metricspb.ScopeMetrics{{
			Scope:   &commonpb.InstrumentationScope{Name: "github.com/mcpseal/mcpseal/telemetry"},
			Metrics: p.t.m.reg.otlp(p.start, now),
		}},
	}
	b, err := proto.Marshal(rm)
	if err != nil {
		return err
	}
	_, err = p.c.Export(ctx, otlp.Repeated([][]byte{b}))
	return err
}

func kv(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// attrs are a series' label pairs as OTLP attributes.
func (f *family) attrs(l labels) []*commonpb.KeyValue {
	out := make([]*commonpb.KeyValue, len(f.labels))
	for i, name := range f.labels {
		out[i] = kv(name, l[i])
	}
	return out
}

// otlp returns every meter as an OTLP metric, cumulative since start.
func (r *registry) otlp(start, now uint64) []*metricspb.Metric {
	r.mu.Lock()
	meters := append([]meter(nil), r.meters...)
	r.mu.Unlock()
	out := make([]*metricspb.Metric, 0, len(meters))
	for _, m := range meters {
		out = append(out, m.otlp(start, now))
	}
	return out
}

func (c *counterVec) otlp(start, now uint64) *metricspb.Metric {
	keys, vals := c.series.sorted()
	pts := make([]*metricspb.NumberDataPoint, len(keys))
	for i, k := range keys {
		pts[i] = &metricspb.NumberDataPoint{Attributes: c.attrs(k), StartTimeUnixNano: start, TimeUnixNano: now,
			Value: &metricspb.NumberDataPoint_AsInt{AsInt: int64(vals[i].Load())}}
	}
	return &metricspb.Metric{Name: c.name, Description: c.help, Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
		DataPoints: pts, AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, IsMonotonic: true}}}
}

func (g *gauge) otlp(_, now uint64) *metricspb.Metric {
	return &metricspb.Metric{Name: g.name, Description: g.help, Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{
		DataPoints: []*metricspb.NumberDataPoint{{TimeUnixNano: now, Value: &metricspb.NumberDataPoint_AsInt{AsInt: g.v.Load()}}}}}}
}

func (g *funcMeter) otlp(start, now uint64) *metricspb.Metric {
	pt := &metricspb.NumberDataPoint{TimeUnixNano: now, Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: g.f()}}
	if g.counter {
		pt.StartTimeUnixNano = start
		return &metricspb.Metric{Name: g.name, Description: g.help, Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
			DataPoints: []*metricspb.NumberDataPoint{pt}, AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, IsMonotonic: true}}}
	}
	return &metricspb.Metric{Name: g.name, Description: g.help, Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: []*metricspb.NumberDataPoint{pt}}}}
}

func (h *histogramVec) otlp(start, now uint64) *metricspb.Metric {
	keys, vals := h.series.sorted()
	pts := make([]*metricspb.HistogramDataPoint, len(keys))
	for i, k := range keys {
		hs := vals[i]
		hs.mu.Lock()
		counts := append([]uint64(nil), hs.counts...) // per bucket, as OTLP wants them
		sum, n := hs.sum, hs.n
		hs.mu.Unlock()
		pts[i] = &metricspb.HistogramDataPoint{Attributes: h.attrs(k), StartTimeUnixNano: start, TimeUnixNano: now,
			Count: n, Sum: &sum, BucketCounts: counts, ExplicitBounds: h.bounds}
	}
	return &metricspb.Metric{Name: h.name, Description: h.help, Unit: h.unit(), Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
		DataPoints: pts, AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}}}
}

func (h *histogramVec) unit() string {
	if len(h.name) > 8 && h.name[len(h.name)-8:] == "_seconds" {
		return "s"
	}
	return ""
}
