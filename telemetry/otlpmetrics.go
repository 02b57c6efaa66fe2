package telemetry

import (
	"context"
	"errors"
	"strconv"
	"time"

	"unicode/utf8"

	"github.com/mcpseal/mcpseal/internal/otlp"
	"github.com/mcpseal/mcpseal/internal/pbwire"
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
	b, err := appendResourceMetrics(nil, p.t.service, p.t.m.reg, p.start, uint64(time.Now().UnixNano()))
	if err != nil {
		return err
	}
	_, err = p.c.Export(ctx, otlp.Repeated([][]byte{b}))
	return err
}

// The OTLP metrics message (opentelemetry/proto/metrics/v1) is encoded by
// hand, byte for byte what proto.Marshal writes for the same message
// (TestMetricsEncodingIsProtoMarshals, FuzzMetricsEncoding): fields in
// number order but a oneof's member last, proto3 scalars left out when
// zero, oneof members and set optional fields written even when zero,
// repeated numbers packed.
// The mcpseal binary then links neither the protobuf runtime nor the
// OTLP message types, whose initialisers ran at every start
// (docs/performance.md, issue 12).

// Field numbers of opentelemetry/proto/{common,resource,metrics}/v1.
const (
	fieldResourceMetricsResource     = 1
	fieldResourceMetricsScopeMetrics = 2
	fieldResourceAttributes          = 1
	fieldScopeMetricsScope           = 1
	fieldScopeMetricsMetrics         = 2
	fieldScopeName                   = 1
	fieldKeyValueKey                 = 1
	fieldKeyValueValue               = 2
	fieldAnyValueString              = 1

	fieldMetricName        = 1
	fieldMetricDescription = 2
	fieldMetricUnit        = 3
	fieldMetricGauge       = 5
	fieldMetricSum         = 7
	fieldMetricHistogram   = 9

	fieldDataPoints             = 1 // of Gauge, Sum and Histogram
	fieldAggregationTemporality = 2 // of Sum and Histogram
	fieldSumIsMonotonic         = 3

	fieldPointStart       = 2 // of NumberDataPoint and HistogramDataPoint
	fieldPointTime        = 3
	fieldNumberAsDouble   = 4
	fieldNumberAsInt      = 6
	fieldNumberAttrs      = 7
	fieldHistCount        = 4
	fieldHistSum          = 5
	fieldHistBuckets      = 6
	fieldHistBounds       = 7
	fieldHistAttrs        = 9
	temporalityCumulative = 2 // AGGREGATION_TEMPORALITY_CUMULATIVE
)

// errNotUTF8 is proto.Marshal's refusal of a proto3 string that is not
// UTF-8 (a label value from a server's tool name, say): the push is
// dropped and the next one tries again.
var errNotUTF8 = errors.New("otlp metrics: a string is not valid UTF-8")

// metricsEncoder appends one message; bad records a string that is not
// UTF-8.
type metricsEncoder struct {
	b   []byte
	bad bool
}

// appendResourceMetrics appends the ResourceMetrics of every meter of reg
// to b, cumulative since start.
func appendResourceMetrics(b []byte, service string, reg *registry, start, now uint64) ([]byte, error) {
	e := &metricsEncoder{b: b}
	r := beginMessage(&e.b, fieldResourceMetricsResource)
	e.keyValue(fieldResourceAttributes, "service.name", service)
	endMessage(&e.b, r)
	sm := beginMessage(&e.b, fieldResourceMetricsScopeMetrics)
	s := beginMessage(&e.b, fieldScopeMetricsScope)
	e.str(fieldScopeName, "github.com/mcpseal/mcpseal/telemetry")
	endMessage(&e.b, s)
	reg.mu.Lock()
	meters := append([]meter(nil), reg.meters...)
	reg.mu.Unlock()
	for _, m := range meters {
		m.appendOTLP(e, start, now)
	}
	endMessage(&e.b, sm)
	if e.bad {
		return nil, errNotUTF8
	}
	return e.b, nil
}

// str appends a proto3 string field, left out when empty.
func (e *metricsEncoder) str(num pbwire.Number, s string) {
	if s != "" {
		e.oneofStr(num, s)
	}
}

// oneofStr appends a string field even when empty.
func (e *metricsEncoder) oneofStr(num pbwire.Number, s string) {
	e.bad = e.bad || !utf8.ValidString(s)
	e.b = pbwire.AppendTag(e.b, num, pbwire.BytesType)
	e.b = pbwire.AppendString(e.b, s)
}

// keyValue appends a KeyValue with a string AnyValue.
func (e *metricsEncoder) keyValue(num pbwire.Number, k, v string) {
	m := beginMessage(&e.b, num)
	e.str(fieldKeyValueKey, k)
	a := beginMessage(&e.b, fieldKeyValueValue)
	e.oneofStr(fieldAnyValueString, v)
	endMessage(&e.b, a)
	endMessage(&e.b, m)
}

// attrs appends a series' label pairs as attributes, field num.
func (e *metricsEncoder) attrs(num pbwire.Number, f *family, l labels) {
	for i, name := range f.labels {
		e.keyValue(num, name, l[i])
	}
}

// beginMetric appends a Metric's name, description and unit and opens
// its data member, field data; the caller ends both, data first.
func (e *metricsEncoder) beginMetric(f *family, unit string, data pbwire.Number) (metric, body int) {
	metric = beginMessage(&e.b, fieldScopeMetricsMetrics)
	e.str(fieldMetricName, f.name)
	e.str(fieldMetricDescription, f.help)
	e.str(fieldMetricUnit, unit)
	return metric, beginMessage(&e.b, data)
}

func (e *metricsEncoder) endMetric(metric, body int) {
	endMessage(&e.b, body)
	endMessage(&e.b, metric)
}

// cumulative appends a Sum's or Histogram's temporality (and a Sum's
// monotonicity).
func (e *metricsEncoder) cumulative(monotonic bool) {
	e.b = appendVarint(e.b, fieldAggregationTemporality, temporalityCumulative)
	if monotonic {
		e.b = appendVarint(e.b, fieldSumIsMonotonic, 1)
	}
}

// numberPoint appends a NumberDataPoint as a data point; asInt chooses
// which member of the value oneof is written (it is written even when 0).
func (e *metricsEncoder) numberPoint(f *family, l labels, start, now uint64, asInt bool, i int64, d float64) {
	p := beginMessage(&e.b, fieldDataPoints)
	e.b = appendFixed64(e.b, fieldPointStart, start)
	e.b = appendFixed64(e.b, fieldPointTime, now)
	if f != nil {
		e.attrs(fieldNumberAttrs, f, l)
	}
	if asInt { // the value oneof, after the other fields as proto.Marshal writes oneofs
		e.b = pbwire.AppendTag(e.b, fieldNumberAsInt, pbwire.Fixed64Type)
		e.b = pbwire.AppendFixed64(e.b, uint64(i))
	} else {
		e.b = pbwire.AppendTag(e.b, fieldNumberAsDouble, pbwire.Fixed64Type)
		e.b = pbwire.AppendDouble(e.b, d)
	}
	endMessage(&e.b, p)
}

func (c *counterVec) appendOTLP(e *metricsEncoder, start, now uint64) {
	keys, vals := c.series.sorted()
	m, sum := e.beginMetric(&c.family, "", fieldMetricSum)
	for i, k := range keys {
		e.numberPoint(&c.family, k, start, now, true, int64(vals[i].Load()), 0)
	}
	e.cumulative(true)
	e.endMetric(m, sum)
}

func (g *gauge) appendOTLP(e *metricsEncoder, _, now uint64) {
	m, gg := e.beginMetric(&g.family, "", fieldMetricGauge)
	e.numberPoint(nil, labels{}, 0, now, true, g.v.Load(), 0)
	e.endMetric(m, gg)
}

func (g *funcMeter) appendOTLP(e *metricsEncoder, start, now uint64) {
	v := g.f()
	if g.counter {
		m, sum := e.beginMetric(&g.family, "", fieldMetricSum)
		e.numberPoint(nil, labels{}, start, now, false, 0, v)
		e.cumulative(true)
		e.endMetric(m, sum)
		return
	}
	m, gg := e.beginMetric(&g.family, "", fieldMetricGauge)
	e.numberPoint(nil, labels{}, 0, now, false, 0, v)
	e.endMetric(m, gg)
}

func (h *histogramVec) appendOTLP(e *metricsEncoder, start, now uint64) {
	keys, vals := h.series.sorted()
	m, hist := e.beginMetric(&h.family, h.unit(), fieldMetricHistogram)
	for i, k := range keys {
		hs := vals[i]
		hs.mu.Lock()
		counts := append([]uint64(nil), hs.counts...) // per bucket, as OTLP wants them
		sum, n := hs.sum, hs.n
		hs.mu.Unlock()
		p := beginMessage(&e.b, fieldDataPoints)
		e.b = appendFixed64(e.b, fieldPointStart, start)
		e.b = appendFixed64(e.b, fieldPointTime, now)
		e.b = appendFixed64(e.b, fieldHistCount, n)
		e.b = pbwire.AppendTag(e.b, fieldHistSum, pbwire.Fixed64Type) // optional, and set
		e.b = pbwire.AppendDouble(e.b, sum)
		if len(counts) > 0 {
			e.b = pbwire.AppendTag(e.b, fieldHistBuckets, pbwire.BytesType)
			e.b = pbwire.AppendVarint(e.b, uint64(8*len(counts)))
			for _, c := range counts {
				e.b = pbwire.AppendFixed64(e.b, c)
			}
		}
		if len(h.bounds) > 0 {
			e.b = pbwire.AppendTag(e.b, fieldHistBounds, pbwire.BytesType)
			e.b = pbwire.AppendVarint(e.b, uint64(8*len(h.bounds)))
			for _, x := range h.bounds {
				e.b = pbwire.AppendDouble(e.b, x)
			}
		}
		e.attrs(fieldHistAttrs, &h.family, k)
		endMessage(&e.b, p)
	}
	e.cumulative(false)
	e.endMetric(m, hist)
}

func (h *histogramVec) unit() string {
	if len(h.name) > 8 && h.name[len(h.name)-8:] == "_seconds" {
		return "s"
	}
	return ""
}
