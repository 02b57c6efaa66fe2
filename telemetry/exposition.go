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
// A meter's label values are joined with a 0 byte (label values are
// reduced to a character set without it) into the key of its series.

type registry struct {
	mu     sync.Mutex
	meters []meter
}

type meter interface {
	write(w *bufio.Writer)
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

// labelPairs writes {a="x",b="y"} for key, plus extra (le) when given.
func (f *family) labelPairs(w *bufio.Writer, key string, extraName, extraValue string) {
	if len(f.labels) == 0 && extraName == "" {
		return
	}
	w.WriteByte('{')
	vals := strings.Split(key, "\x00")
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

func key(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return strings.Join(values, "\x00")
}

// counterVec is a counter per label set; a family without labels has one
// series, created at registration so that it is always exported.
type counterVec struct {
	family
	series sync.Map // key -> *atomic.Uint64
}

func (r *registry) counter(name, help string, labels ...string) *counterVec {
	c := &counterVec{family: family{name: name, help: help, labels: labels}}
	if len(labels) == 0 {
		c.series.Store("", new(atomic.Uint64))
	}
	r.add(c)
	return c
}

// Inc adds one to the series of values (one per label).
func (c *counterVec) Inc(values ...string) {
	k := key(values)
	v, ok := c.series.Load(k)
	if !ok {
		v, _ = c.series.LoadOrStore(k, new(atomic.Uint64))
	}
	v.(*atomic.Uint64).Add(1)
}

func sortedKeys(m *sync.Map) []string {
	var keys []string
	m.Range(func(k, _ any) bool {
		keys = append(keys, k.(string))
		return true
	})
	slices.Sort(keys)
	return keys
}

func (c *counterVec) write(w *bufio.Writer) {
	c.header(w, "counter")
	for _, k := range sortedKeys(&c.series) {
		v, _ := c.series.Load(k)
		w.WriteString(c.name)
		c.labelPairs(w, k, "", "")
		w.WriteString(" " + strconv.FormatUint(v.(*atomic.Uint64).Load(), 10) + "\n")
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
	series sync.Map // key -> *histogram
}

type histogram struct {
	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

func (r *registry) histogram(name, help string, bounds []float64, labels ...string) *histogramVec {
	h := &histogramVec{family: family{name: name, help: help, labels: labels}, bounds: bounds}
	r.add(h)
	return h
}

// Observe records v in the series of values.
func (h *histogramVec) Observe(v float64, values ...string) {
	k := key(values)
	s, ok := h.series.Load(k)
	if !ok {
		s, _ = h.series.LoadOrStore(k, &histogram{counts: make([]uint64, len(h.bounds)+1)})
	}
	hs := s.(*histogram)
	i, _ := slices.BinarySearch(h.bounds, v) // the first bound >= v
	hs.mu.Lock()
	hs.counts[i]++
	hs.sum += v
	hs.n++
	hs.mu.Unlock()
}

func (h *histogramVec) write(w *bufio.Writer) {
	h.header(w, "histogram")
	for _, k := range sortedKeys(&h.series) {
		s, _ := h.series.Load(k)
		hs := s.(*histogram)
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
