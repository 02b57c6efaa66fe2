package telemetry

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpseal/mcpseal/gate"
)

const (
	tpA = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tpB = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
)

func ignored(m *metrics) uint64 {
	v := m.badContext.series.get(labels{}, newUint)
	return v.Load()
}

// TestAttackAmbiguousTraceContext: a client sends its trace context twice
// (in _meta and in the HTTP headers) and the two differ, or one copy is
// malformed, or the header is repeated. Whichever copy a reader picked
// would be a guess; the context is ignored whole and counted, never read
// as if the bad copy were absent.
func TestAttackAmbiguousTraceContext(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		meta    string
		tp, ts  []string
		wantTP  string // "" when the context must be ignored
		wantTS  string
		counted bool
	}{
		{name: "none"},
		{name: "header only", tp: []string{tpA}, ts: []string{"congo=t61rcWkgMzE"}, wantTP: tpA, wantTS: "congo=t61rcWkgMzE"},
		{name: "tracestate lines combined", tp: []string{tpA}, ts: []string{"congo=a", "rojo=b"}, wantTP: tpA, wantTS: "congo=a,rojo=b"},
		{name: "meta only", meta: `{"traceparent":"` + tpA + `"}`, wantTP: tpA},
		{name: "both agree", meta: `{"traceparent":"` + tpA + `","tracestate":"congo=a"}`, tp: []string{tpA}, ts: []string{"congo=a"}, wantTP: tpA, wantTS: "congo=a"},
		{name: "both differ", meta: `{"traceparent":"` + tpA + `"}`, tp: []string{tpB}, counted: true},
		{name: "tracestates differ", meta: `{"traceparent":"` + tpA + `","tracestate":"congo=a"}`, tp: []string{tpA}, ts: []string{"congo=b"}, counted: true},
		{name: "repeated header", tp: []string{tpA, tpA}, counted: true},
		{name: "malformed header beside a good meta", meta: `{"traceparent":"` + tpA + `"}`, tp: []string{strings.ToUpper(tpA)}, counted: true},
		{name: "malformed meta beside a good header", meta: `{"traceparent":1}`, tp: []string{tpA}, counted: true},
		{name: "tracestate header without traceparent", ts: []string{"congo=a"}, counted: true},
		{name: "oversized tracestate header", tp: []string{tpA}, ts: []string{"a=" + strings.Repeat("b", maxTracestate)}, counted: true},
		{name: "too many tracestate lines", tp: []string{tpA}, ts: strings.Split(strings.Repeat("a=b,", maxTracestateMembers+1), ","), counted: true},
	} {
		s := &Session{t: &Telemetry{m: newMetrics()}}
		var meta []byte
		if c.meta != "" {
			meta = []byte(c.meta)
		}
		sc, st, ok := s.clientContext(meta, headerContext{traceparent: c.tp, tracestate: c.ts})
		if got := ignored(s.t.m); (got == 1) != c.counted {
			t.Errorf("%s: counted %d", c.name, got)
		}
		if c.wantTP == "" {
			if ok {
				t.Errorf("%s: used %v", c.name, sc.TraceID)
			}
			continue
		}
		if !ok || formatTraceparent(trace.NewSpanContext(sc)) != c.wantTP || st.String() != c.wantTS {
			t.Errorf("%s: got %v %v %q", c.name, ok, sc, st.String())
		}
	}
}

// TestAttackMadeUpToolNamesCrowdOutRealTools: a client calls 100 tools
// that do not exist (each refused, unknown-tool) before the real ones.
// Were every name a label value, the first 64 made-up names would take
// the tool label's places and the real tools would be metered as other.
func TestAttackMadeUpToolNamesCrowdOutRealTools(t *testing.T) {
	t.Parallel()
	s := &Session{t: &Telemetry{m: newMetrics()}}
	for i := range 100 {
		s.event(gate.Event{Op: "call", Outcome: "refused", Code: gate.ReasonUnknownTool, Name: fmt.Sprintf("made-up-%d", i)})
	}
	for _, name := range []string{"echo", "add"} {
		s.event(gate.Event{Op: "call", Outcome: "allowed", Name: name, Digest: "sha256:" + strings.Repeat("0", 64)})
	}
	var b bytes.Buffer
	if err := s.t.m.reg.writeTo(&b); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(&b)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, m := range fams["mcpseal_tool_calls_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "tool" {
				got[l.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	if got["echo"] != 1 || got["add"] != 1 || got[otherLabel] != 100 || len(got) != 3 {
		t.Fatalf("tool label values: %v", got)
	}
}
