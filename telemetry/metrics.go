package telemetry

import (
	"strings"
	"sync"
)

// Label values never carry what a peer chose beyond a safe-reduced name,
// and every label has a bounded set of values: a fixed list, or the first
// values seen up to a cap, after which every new value is counted as
// "other". The sets are listed in docs/observability.md.
const (
	// maxToolLabels bounds the tool label: a server may list thousands of
	// tools and a client may call names nobody listed.
	maxToolLabels = 64
	// maxCodeLabels bounds the refusal code label. Codes are mcpseal's
	// own words (docs/error-codes.md), a few dozen in all.
	maxCodeLabels = 64
	// maxLabelLen bounds one label value.
	maxLabelLen = 64
	otherLabel  = "other"
)

// methods are the MCP methods counted under their own name; every other
// method a client sends is "other".
var methods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true,
	"tools/list": true, "tools/call": true,
	"prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"completion/complete": true, "logging/setLevel": true, "subscriptions/listen": true,
}

func methodLabel(m string) string {
	if methods[m] {
		return m
	}
	return otherLabel
}

// capped is a label whose values are the first max distinct values seen.
type capped struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func newCapped(max int) *capped { return &capped{max: max, seen: make(map[string]struct{})} }

// value reduces v to [A-Za-z0-9_.:/-] and at most maxLabelLen bytes, and
// returns it while the set has room for it, else "other".
func (c *capped) value(v string) string {
	v = reduce(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[v]; ok {
		return v
	}
	if len(c.seen) >= c.max {
		return otherLabel
	}
	c.seen[v] = struct{}{}
	return v
}

func reduce(v string) string {
	if v == "" {
		return "_"
	}
	var b strings.Builder
	for i := 0; i < len(v) && b.Len() < maxLabelLen; i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("_.:/-", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// metrics are the process's meters.
type metrics struct {
	reg         *registry
	requests    *counterVec
	refusals    *counterVec
	toolCalls   *counterVec
	drift       *counterVec
	withheld    *counterVec
	confirms    *counterVec
	upstream    *histogramVec
	gateLatency *histogramVec
	listing     *histogramVec
	sessions    *gauge
	badContext  *counterVec
	untracked   *counterVec

	tools, codes *capped

	auditMu sync.Mutex
	audits  map[*auditSource]struct{}
	retired int64 // drops of audit writers that have closed
}

// auditSource is one audit writer's queue, read at scrape time.
type auditSource struct {
	depth   func() int
	dropped func() int64
}

// latencyBuckets span a local call (a fraction of a millisecond through
// the gate) to a slow remote tool (a minute).
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

func newMetrics() *metrics {
	r := &registry{}
	m := &metrics{
		reg: r,
		requests: r.counter("mcpseal_requests_total",
			"Client requests through the gate, by method and outcome (ok, error, refused, unanswered).", "method", "outcome"),
		refusals: r.counter("mcpseal_refusals_total",
			"Requests mcpseal answered with its own refusal, by reason code.", "code"),
		toolCalls: r.counter("mcpseal_tool_calls_total",
			"tools/call decisions by tool (the first 64 safe-reduced names, then other) and outcome.", "tool", "outcome"),
		drift: r.counter("mcpseal_drift_events_total",
			"Contract drifts, by outcome (blocked, or forwarded under monitor).", "outcome"),
		withheld: r.counter("mcpseal_withheld_total",
			"Definitions, instructions and results withheld from the client, by kind.", "kind"),
		confirms: r.counter("mcpseal_confirmations_total",
			"Confirmations asked of a person, and their answers (asked, accepted, declined).", "outcome"),
		upstream: r.histogram("mcpseal_upstream_duration_seconds",
			"From a request's forwarding to the server's answer, by method.", latencyBuckets, "method"),
		gateLatency: r.histogram("mcpseal_gate_duration_seconds",
			"From a client request's arrival to its forwarding or refusal (verification, policy, preflight, confirmation), by method.", latencyBuckets, "method"),
		listing: r.histogram("mcpseal_listing_definitions",
			"Definitions shown per listing page, by kind.", []float64{0, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 5000}, "kind"),
		sessions: r.gauge("mcpseal_sessions_open", "Gate sessions open now."),
		badContext: r.counter("mcpseal_trace_context_ignored_total",
			"Client trace contexts (params._meta or HTTP traceparent, tracestate) ignored as malformed, oversized or ambiguous."),
		untracked: r.counter("mcpseal_requests_untracked_total",
			"Requests not measured because too many were in flight in one session."),
		tools:  newCapped(maxToolLabels),
		codes:  newCapped(maxCodeLabels),
		audits: make(map[*auditSource]struct{}),
	}
	r.gaugeFunc("mcpseal_audit_queue_depth", "Audit events queued and not yet written.", false, func() float64 {
		n, _ := m.auditTotals()
		return float64(n)
	})
	r.gaugeFunc("mcpseal_audit_dropped_total", "Audit events dropped because they arrived faster than they could be written.", true, func() float64 {
		_, d := m.auditTotals()
		return float64(d)
	})
	return m
}

func (m *metrics) auditTotals() (depth int, dropped int64) {
	m.auditMu.Lock()
	defer m.auditMu.Unlock()
	dropped = m.retired
	for a := range m.audits {
		depth += a.depth()
		dropped += a.dropped()
	}
	return depth, dropped
}
