package telemetry

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The meters and the Prometheus text exposition format (version 0.0.4),
// written here rather than with the Prometheus Go client: that client's
// package initialisation (its default registry, with Go runtime and
// process collectors) costs every mcpseal process about 2 MiB whether
// metrics are on or not, and a `mcpseal run` runs beside every server a
// client starts. What is written is checked with the Prometheus text
// parser in the tests.
//
// A meter has at most two labels; a series is keyed by its label values.

type registry struct {
	mu     sync.Mutex
	meters []meter
}

type meter interface {
	write(w *bufio.Writer)
	appendOTLP(e *metricsEncoder, start, now uint64)
}

func (r *registry) add(m meter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.meters = append(r.meters, m)
}

// writeTo writes every meter, in registration order, each series sorted.
func (r *registry) writeTo(w io.Writer) error {
	r.mu.Lock()
	meters := slices.Clone(r.meters)
	r.mu.Unlock()
	bw := bufio.NewWriter(w)
	for _, m := range meters {
		m.write(bw)
	}
	return bw.Flush()
}

type family struct {
	name, help string
	labels     []string
}

func (f *family) header(w *bufio.Writer, typ string) {
	w.WriteString("# HELP " + f.name + " " + f.help + "\n# TYPE " + f.name + " " + typ + "\n")
}

// labels is a series' label values (at most two).
type labels [2]string

func labelsOf(values []string) labels {
	var l labels
	copy(l[:], values)
	return l
}

// labelPairs writes {a="x",b="y"} for vals, plus extra (le) when given.
func (f *family) labelPairs(w *bufio.Writer, vals labels, extraName, extraValue string) {
	if len(f.labels) == 0 && extraName == "" {
		return
	}
	w.WriteByte('{')
	for i, l := range f.labels {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString(l + `="`)
		writeEscaped(w, vals[i])
		w.WriteByte('"')
	}
	if extraName != "" {
		if len(f.labels) > 0 {
			w.WriteByte(',')
		}
		w.WriteString(extraName + `="` + extraValue + `"`)
	}
	w.WriteByte('}')
}

func writeEscaped(w *bufio.Writer, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			w.WriteString(`\\`)
		case '"':
			w.WriteString(`\"`)
		case '\n':
			w.WriteString(`\n`)
		default:
			w.WriteByte(c)
		}
	}
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// series maps label values to a meter's state, created on first use.
type series[T any] struct {
	mu sync.RWMutex
	m  map[labels]*T
}

func (s *series[T]) lookup(l labels) *T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.m[l]
}

func (s *series[T]) get(l labels, mk func() *T) *T {
	if v := s.lookup(l); v != nil {
		return v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[l]; ok {
		return v
	}
	if s.m == nil {
		s.m = make(map[labels]*T)
	}
	v := mk()
	s.m[l] = v
	return v
}

// sorted returns the series in label order.
func (s *series[T]) sorted() ([]labels, []*T) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := make([]labels, 0, len(s.m))
	for k := range s.m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b labels) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	vals := make([]*T, len(keys))
	for i, k := range keys {
		vals[i] = s.m[k]
	}
	return keys, vals
}

// counterVec is a counter per label set; a family without labels has one
// series, created at registration so that it is always exported.
type counterVec struct {
	family
	series series[atomic.Uint64]
}

func newUint() *atomic.Uint64 { return new(atomic.Uint64) }

func (r *registry) counter(name, help string, labelNames ...string) *counterVec {
	if len(labelNames) > len(labels{}) {
		panic("telemetry: a meter has at most two labels")
	}
	c := &counterVec{family: family{name: name, help: help, labels: labelNames}}
	if len(labelNames) == 0 {
		c.series.get(labels{}, newUint)
	}
	r.add(c)
	return c
}

// Inc adds one to the series of values (one per label).
func (c *counterVec) Inc(values ...string) {
	c.series.get(labelsOf(values), newUint).Add(1)
}

func (c *counterVec) write(w *bufio.Writer) {
	c.header(w, "counter")
	keys, vals := c.series.sorted()
	for i, k := range keys {
		w.WriteString(c.name)
		c.labelPairs(w, k, "", "")
		w.WriteString(" " + strconv.FormatUint(vals[i].Load(), 10) + "\n")
	}
}

type gauge struct {
	family
	v atomic.Int64
}

func (r *registry) gauge(name, help string) *gauge {
	g := &gauge{family: family{name: name, help: help}}
	r.add(g)
	return g
}

func (g *gauge) Inc() { g.v.Add(1) }
func (g *gauge) Dec() { g.v.Add(-1) }

func (g *gauge) write(w *bufio.Writer) {
	g.header(w, "gauge")
	w.WriteString(g.name + " " + strconv.FormatInt(g.v.Load(), 10) + "\n")
}

// funcMeter is read at scrape time.
type funcMeter struct {
	family
	counter bool
	f       func() float64
}

func (r *registry) gaugeFunc(name, help string, counter bool, f func() float64) {
	r.add(&funcMeter{family: family{name: name, help: help}, counter: counter, f: f})
}

func (g *funcMeter) write(w *bufio.Writer) {
	typ := "gauge"
	if g.counter {
		typ = "counter"
	}
	g.header(w, typ)
	w.WriteString(g.name + " " + formatFloat(g.f()) + "\n")
}

// histogramVec is a histogram per label set, with fixed buckets.
type histogramVec struct {
	family
	bounds []float64
	series series[histogram]
}

type histogram struct {
	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

func (r *registry) histogram(name, help string, bounds []float64, labelNames ...string) *histogramVec {
	h := &histogramVec{family: family{name: name, help: help, labels: labelNames}, bounds: bounds}
	r.add(h)
	return h
}

// Observe records v in the series of values.
func (h *histogramVec) Observe(v float64, values ...string) {
	l := labelsOf(values)
	hs := h.series.lookup(l)
	if hs == nil {
		hs = h.series.get(l, func() *histogram { return &histogram{counts: make([]uint64, len(h.bounds)+1)} })
	}
	i, _ := slices.BinarySearch(h.bounds, v) // the first bound >= v
	hs.mu.Lock()
	hs.counts[i]++
	hs.sum += v
	hs.n++
	hs.mu.Unlock()
}

func (h *histogramVec) write(w *bufio.Writer) {
	h.header(w, "histogram")
	keys, vals := h.series.sorted()
	for j, k := range keys {
		hs := vals[j]
		hs.mu.Lock()
		counts, sum, n := slices.Clone(hs.counts), hs.sum, hs.n
		hs.mu.Unlock()
		var cum uint64
		for i, b := range h.bounds {
			cum += counts[i]
			w.WriteString(h.name + "_bucket")
			h.labelPairs(w, k, "le", formatFloat(b))
			w.WriteString(" " + strconv.FormatUint(cum, 10) + "\n")
		}
		w.WriteString(h.name + "_bucket")
		h.labelPairs(w, k, "le", "+Inf")
		w.WriteString(" " + strconv.FormatUint(n, 10) + "\n")
		w.WriteString(h.name + "_sum")
		h.labelPairs(w, k, "", "")
		w.WriteString(" " + formatFloat(sum) + "\n")
		w.WriteString(h.name + "_count")
		h.labelPairs(w, k, "", "")
		w.WriteString(" " + strconv.FormatUint(n, 10) + "\n")
	}
}
