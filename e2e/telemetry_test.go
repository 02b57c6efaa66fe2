package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/mcpseal/mcpseal/internal/testmcp"
)

// Telemetry end to end (issue 16): the real binary exports to in-process
// OTLP receivers (HTTP and gRPC, decoded with the OpenTelemetry proto
// modules) and serves a Prometheus endpoint that is scraped and parsed with
// the Prometheus text parser.

// secretMarkers are put in arguments, results, descriptions and tokens;
// none may appear in any exported span or metric.
var secretMarkers = []string{"MARKER-ARG", "MARKER-RESULT", "MARKER-DESC", "MARKER-KEY"}

func telemetryScenario(dir string) *testmcp.Scenario {
	return &testmcp.Scenario{
		StateDir:   dir,
		RecordFile: filepath.Join(dir, "received.jsonl"),
		Contract: testmcp.Contract{Tools: []testmcp.RawJSON{
			testmcp.RawJSON(`{"name":"echo","description":"MARKER-DESC repeats text.","inputSchema":{"type":"object"}}`),
		}},
		CallResult: testmcp.RawJSON(`{"content":[{"type":"text","text":"MARKER-RESULT"}]}`),
	}
}

// otlpReceiver collects what an OTLP exporter sends, decoded and raw.
type otlpReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics []string // names of the metrics pushed
	raw     [][]byte
}

func (r *otlpReceiver) add(req *coltracepb.ExportTraceServiceRequest) {
	raw, _ := proto.Marshal(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.raw = append(r.raw, raw)
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
}

// Export implements the OTLP/gRPC trace service.
func (r *otlpReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	r.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// metricsService is the OTLP/gRPC metrics service of a receiver.
type metricsService struct {
	colmetricspb.UnimplementedMetricsServiceServer
	r *otlpReceiver
}

func (m metricsService) Export(_ context.Context, req *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	raw, _ := proto.Marshal(req)
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	m.r.raw = append(m.r.raw, raw)
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, mt := range sm.Metrics {
				m.r.metrics = append(m.r.metrics, mt.Name)
			}
		}
	}
	return &colmetricspb.ExportMetricsServiceResponse{}, nil
}

// ServeHTTP implements OTLP/HTTP (binary protobuf) at /v1/traces and
// /v1/metrics.
func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not OTLP/HTTP protobuf", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 16<<20))
	if req.URL.Path == "/v1/metrics" {
		var m colmetricspb.ExportMetricsServiceRequest
		if err != nil || proto.Unmarshal(body, &m) != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.raw = append(r.raw, body)
		for _, rm := range m.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, mt := range sm.Metrics {
					r.metrics = append(r.metrics, mt.Name)
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&colmetricspb.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
		return
	}
	if req.URL.Path != "/v1/traces" {
		http.Error(w, "unknown path", http.StatusNotFound)
		return
	}
	var m coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &m)
	}
	if err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	r.add(&m)
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// waitSpans waits until a span of each name arrived.
func (r *otlpReceiver) waitSpans(t *testing.T, names ...string) []*tracepb.Span {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r.mu.Lock()
		spans := slices.Clone(r.spans)
		r.mu.Unlock()
		missing := ""
		for _, n := range names {
			if !slices.ContainsFunc(spans, func(s *tracepb.Span) bool { return s.Name == n }) {
				missing = n
				break
			}
		}
		if missing == "" {
			return spans
		}
		if time.Now().After(deadline) {
			var got []string
			for _, s := range spans {
				got = append(got, s.Name)
			}
			t.Fatalf("no span %q within 15s; got %v", missing, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// noSecrets fails if any marker is in any export.
func (r *otlpReceiver) noSecrets(t *testing.T, extra ...string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.raw) == 0 {
		t.Fatal("nothing was exported")
	}
	for _, raw := range r.raw {
		for _, m := range append(slices.Clone(secretMarkers), extra...) {
			if bytes.Contains(raw, []byte(m)) {
				t.Errorf("secret %q exported in a span", m)
			}
		}
	}
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.GetStringValue()
		}
	}
	return ""
}

func spansNamed(spans []*tracepb.Span, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func newTraceparent() (traceID, spanID, header string) {
	var b [24]byte
	for i := range b {
		b[i] = byte(rand.IntN(256))
	}
	b[0] |= 1
	traceID, spanID = hex.EncodeToString(b[:16]), hex.EncodeToString(b[16:])
	return traceID, spanID, "00-" + traceID + "-" + spanID + "-01"
}

// TestTraceSpanTreeOverOTLPHTTP: `mcpseal run` exports a session's span
// tree and its metrics over OTLP/HTTP; a call carrying
// params._meta.traceparent continues the client's trace, and the server
// receives that traceparent unchanged; no secret is in a span or metric.
func TestTraceSpanTreeOverOTLPHTTP(t *testing.T) {
	t.Parallel()
	recv := &otlpReceiver{}
	col := httptest.NewServer(recv)
	defer col.Close()
	dir := t.TempDir()
	sc := telemetryScenario(dir)
	p := startScenario(t, home(t), []string{"--name", "traced", "--otlp-endpoint", col.URL}, sc)
	if _, err := p.Initialize("2025-06-18", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ListTools(); err != nil {
		t.Fatal(err)
	}
	traceID, parentID, tp := newTraceparent()
	if _, err := p.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "MARKER-ARG", "MARKER-KEY": 1},
		"_meta": map[string]any{"traceparent": tp, "tracestate": "mcpseal-test=1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CallTool("echo", map[string]any{"text": "MARKER-ARG"}); err != nil {
		t.Fatal(err)
	}
	// A malformed traceparent is ignored, not trusted.
	if _, err := p.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{},
		"_meta": map[string]any{"traceparent": "00-" + strings.ToUpper(traceID) + "-" + parentID + "-01"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CallTool("not-listed", nil); err == nil {
		t.Fatal("a call to an unlisted tool was not refused")
	}
	if code := p.Close(); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	spans := recv.waitSpans(t, "mcpseal.session", "initialize", "mcpseal.verify", "tools/list", "tools/call echo", "mcpseal.upstream")
	sess := spansNamed(spans, "mcpseal.session")
	if len(sess) != 1 {
		t.Fatalf("%d session spans", len(sess))
	}
	root := sess[0]
	if len(root.ParentSpanId) != 0 || attr(root, "mcp.session.id") == "" {
		t.Errorf("session span: parent %x, mcp.session.id %q", root.ParentSpanId, attr(root, "mcp.session.id"))
	}
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		byID[hex.EncodeToString(s.SpanId)] = s
	}
	parentName := func(s *tracepb.Span) string {
		if p := byID[hex.EncodeToString(s.ParentSpanId)]; p != nil {
			return p.Name
		}
		return ""
	}
	for _, name := range []string{"initialize", "tools/list"} {
		for _, s := range spansNamed(spans, name) {
			if parentName(s) != "mcpseal.session" || attr(s, "mcp.method.name") != name || attr(s, "mcp.session.id") != attr(root, "mcp.session.id") {
				t.Errorf("%s span: parent %q, attributes %v", name, parentName(s), s.Attributes)
			}
		}
	}
	if v := spansNamed(spans, "mcpseal.verify"); len(v) != 1 || parentName(v[0]) != "initialize" {
		t.Errorf("verify spans: %d, parent %q", len(v), parentName(v[0]))
	}
	calls := spansNamed(spans, "tools/call echo")
	if len(calls) != 3 {
		t.Fatalf("%d echo call spans, want 3", len(calls))
	}
	continued := 0
	for _, c := range calls {
		if attr(c, "gen_ai.tool.name") != "echo" || attr(c, "mcpseal.outcome") != "ok" || c.Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("call span attributes %v kind %v", c.Attributes, c.Kind)
		}
		if hex.EncodeToString(c.TraceId) == traceID {
			continued++
			if hex.EncodeToString(c.ParentSpanId) != parentID || len(c.Links) != 1 || !bytes.Equal(c.Links[0].SpanId, root.SpanId) {
				t.Errorf("the traced call's parent is %x (want the client's %s), links %v", c.ParentSpanId, parentID, c.Links)
			}
		} else if parentName(c) != "mcpseal.session" {
			t.Errorf("an untraced call's parent is %q", parentName(c))
		}
		ups := 0
		for _, u := range spansNamed(spans, "mcpseal.upstream") {
			if bytes.Equal(u.ParentSpanId, c.SpanId) {
				ups++
				if u.Kind != tracepb.Span_SPAN_KIND_CLIENT || u.EndTimeUnixNano < u.StartTimeUnixNano {
					t.Errorf("upstream span kind %v", u.Kind)
				}
			}
		}
		if ups != 1 {
			t.Errorf("call span has %d upstream spans", ups)
		}
	}
	if continued != 1 {
		t.Errorf("%d call spans continue the client's trace, want 1 (the malformed traceparent must be ignored)", continued)
	}
	// A tool outside the verified contract: the name the client made up
	// is in no span (the span is the method's).
	refused := spansNamed(spans, "tools/call")
	if len(refused) != 1 || attr(refused[0], "mcpseal.outcome") != "refused" || attr(refused[0], "mcpseal.refusal.code") != "unknown-tool" || attr(refused[0], "gen_ai.tool.name") != "" {
		t.Errorf("the refused call's span: %v", refused)
	}
	if n := len(spansNamed(spans, "tools/call not-listed")); n != 0 {
		t.Errorf("%d spans named after a tool outside the contract", n)
	}
	for _, u := range spansNamed(spans, "mcpseal.upstream") {
		if len(refused) == 1 && bytes.Equal(u.ParentSpanId, refused[0].SpanId) {
			t.Error("a refused call has an upstream span")
		}
	}
	// The server saw the client's traceparent exactly as sent.
	recs, err := testmcp.ReadRecords(sc.RecordFile)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(recs, func(r testmcp.Record) bool {
		return r.Method() == "tools/call" && strings.Contains(r.Message, `"traceparent":"`+tp+`"`)
	}) {
		t.Errorf("the server never received the client's traceparent")
	}
	// The meters went to the same collector over OTLP, pushed at exit.
	recv.mu.Lock()
	pushed := slices.Contains(recv.metrics, "mcpseal_requests_total") && slices.Contains(recv.metrics, "mcpseal_upstream_duration_seconds")
	recv.mu.Unlock()
	if !pushed {
		t.Error("no OTLP metrics arrived")
	}
	recv.noSecrets(t)
}

// TestGatewayTracesOverOTLPGRPC: the gateway exports over OTLP/gRPC, a
// client's _meta.traceparent reaches the remote upstream unchanged, and
// neither the launch token nor any content is in a span.
// echoUpstream is a remote Streamable HTTP server (go-sdk, stateless)
// with one echo tool carrying secret markers; seen is called with each
// request and its body before it is served.
func echoUpstream(seen func(r *http.Request, body []byte)) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "MARKER-DESC repeats.", InputSchema: objectSchema(nil)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "MARKER-RESULT"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		seen(r, b)
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	}))
}

func TestGatewayTracesOverOTLPGRPC(t *testing.T) {
	t.Parallel()
	recv := &otlpReceiver{}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, recv)
	colmetricspb.RegisterMetricsServiceServer(gs, metricsService{r: recv})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(l) }()
	defer gs.Stop()

	var mu sync.Mutex
	var bodies []string
	up := echoUpstream(func(_ *http.Request, b []byte) {
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
	})
	defer up.Close()
	g := startGateway(t, home(t), fmt.Sprintf(`{"routes":{"remote":{"url":"%s/mcp","private":true}}}`, up.URL),
		"--otlp-endpoint", "http://"+l.Addr().String(), "--otlp-protocol", "grpc")
	cs, err := g.connect("remote", "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	traceID, parentID, tp := newTraceparent()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "MARKER-ARG"}, Meta: mcp.Meta{"traceparent": tp}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	g.stop()
	spans := recv.waitSpans(t, "mcpseal.session", "tools/call echo", "mcpseal.upstream")
	call := spansNamed(spans, "tools/call echo")[0]
	if hex.EncodeToString(call.TraceId) != traceID || hex.EncodeToString(call.ParentSpanId) != parentID {
		t.Errorf("the call span is in trace %x under %x, want %s under %s", call.TraceId, call.ParentSpanId, traceID, parentID)
	}
	mu.Lock()
	seen := slices.ContainsFunc(bodies, func(b string) bool { return strings.Contains(b, tp) && strings.Contains(b, "tools/call") })
	mu.Unlock()
	if !seen {
		t.Error("the upstream never received the client's traceparent")
	}
	recv.mu.Lock()
	pushed := slices.Contains(recv.metrics, "mcpseal_tool_calls_total")
	recv.mu.Unlock()
	if !pushed {
		t.Error("no OTLP/gRPC metrics arrived")
	}
	recv.noSecrets(t, g.token)
}

// documentedSeries are the families docs/observability.md lists, with
// the label names each carries.
var documentedSeries = map[string][]string{
	"mcpseal_requests_total":              {"method", "outcome"},
	"mcpseal_refusals_total":              {"code"},
	"mcpseal_tool_calls_total":            {"outcome", "tool"},
	"mcpseal_drift_events_total":          {"outcome"},
	"mcpseal_withheld_total":              {"kind"},
	"mcpseal_confirmations_total":         {"outcome"},
	"mcpseal_upstream_duration_seconds":   {"method"},
	"mcpseal_gate_duration_seconds":       {"method"},
	"mcpseal_listing_definitions":         {"kind"},
	"mcpseal_sessions_open":               nil,
	"mcpseal_audit_queue_depth":           nil,
	"mcpseal_audit_dropped_total":         nil,
	"mcpseal_trace_context_ignored_total": nil,
	"mcpseal_requests_untracked_total":    nil,
}

// TestMetricsBoundedAfterRandomToolNames: after 1,000 calls with random
// tool names (a client that sprays names, a label-cardinality attack) the
// Prometheus endpoint parses, carries only the documented series and
// labels, and the tool label holds at most 64 names plus "other".
func TestMetricsBoundedAfterRandomToolNames(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	dir := t.TempDir()
	p := startScenario(t, home(t), []string{"--name", "metered", "--metrics-listen", addr}, telemetryScenario(dir))
	if _, err := p.Initialize("2025-06-18", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ListTools(); err != nil {
		t.Fatal(err)
	}
	const calls = 1000
	refused := 0
	for i := range calls {
		name := fmt.Sprintf("rnd-%d-%x\u00e9\n{}", i, rand.Uint64())
		if i%10 == 0 {
			name = "echo"
		}
		_, err := p.CallTool(name, map[string]any{"text": "MARKER-ARG"})
		if name != "echo" {
			if err == nil {
				t.Fatalf("call %d to an unlisted tool was not refused", i)
			}
			refused++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range secretMarkers {
		if bytes.Contains(body, []byte(m)) {
			t.Errorf("metrics carry %q", m)
		}
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the metrics page does not parse: %v", err)
	}
	series := 0
	for name, f := range fams {
		want, ok := documentedSeries[name]
		if !ok {
			t.Errorf("undocumented series %s", name)
			continue
		}
		for _, m := range f.Metric {
			series++
			var names []string
			for _, lp := range m.Label {
				names = append(names, lp.GetName())
			}
			slices.Sort(names)
			if !slices.Equal(names, want) {
				t.Errorf("%s labels %v, want %v", name, names, want)
			}
		}
	}
	for name := range documentedSeries {
		if _, ok := fams[name]; !ok && !strings.HasPrefix(name, "mcpseal_drift") && !strings.HasPrefix(name, "mcpseal_withheld") && !strings.HasPrefix(name, "mcpseal_confirm") {
			t.Errorf("series %s missing", name)
		}
	}
	tools := map[string]bool{}
	var toolCalls float64
	for _, m := range fams["mcpseal_tool_calls_total"].GetMetric() {
		tools[label(m, "tool")] = true
		toolCalls += m.GetCounter().GetValue()
	}
	if len(tools) > 65 || !tools["echo"] || !tools["other"] {
		t.Errorf("tool label has %d values (want at most 64 and other, with echo)", len(tools))
	}
	if toolCalls != calls {
		t.Errorf("tool calls counted %v, want %d", toolCalls, calls)
	}
	var refusedCount float64
	for _, m := range fams["mcpseal_refusals_total"].GetMetric() {
		if label(m, "code") == "unknown-tool" {
			refusedCount = m.GetCounter().GetValue()
		}
	}
	if int(refusedCount) != refused {
		t.Errorf("refusals{code=unknown-tool} = %v, want %d", refusedCount, refused)
	}
	for _, m := range fams["mcpseal_requests_total"].GetMetric() {
		if label(m, "method") == "tools/call" && label(m, "outcome") == "ok" && m.GetCounter().GetValue() != calls/10 {
			t.Errorf("tools/call ok = %v, want %d", m.GetCounter().GetValue(), calls/10)
		}
	}
	if series > 200 {
		t.Errorf("%d series after %d calls: cardinality is not bounded", series, calls)
	}
	t.Logf("%d series after %d calls with random tool names", series, calls)
}

func label(m *dto.Metric, name string) string {
	for _, lp := range m.Label {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// scrape fetches and parses the Prometheus endpoint at addr.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func counter(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	var n float64
	for _, m := range fams[name].GetMetric() {
		ok := true
		for k, v := range labels {
			ok = ok && label(m, k) == v
		}
		if ok {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// TestWithheldResultCountsAsRefusal: a server's result that mcpseal
// withholds (it violates the pinned outputSchema) is mcpseal's refusal
// in the metrics, not the server's error.
func TestWithheldResultCountsAsRefusal(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	dir := t.TempDir()
	pol := writePolicy(t, `{"version": 1}`)
	p := startScenario(t, home(t), []string{"--name", policyServer, "--policy", pol, "--metrics-listen", addr}, policyScenario(dir))
	if _, err := p.Initialize("2025-06-18", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ListTools(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CallTool("typed", nil); err == nil {
		t.Fatal("a result that violates the outputSchema reached the client")
	}
	fams := scrape(t, addr)
	if n := counter(fams, "mcpseal_requests_total", map[string]string{"method": "tools/call", "outcome": "refused"}); n != 1 {
		t.Errorf("refused tools/call = %v, want 1", n)
	}
	if n := counter(fams, "mcpseal_requests_total", map[string]string{"method": "tools/call", "outcome": "error"}); n != 0 {
		t.Errorf("the withheld result counted as the server's error (%v)", n)
	}
	if n := counter(fams, "mcpseal_withheld_total", map[string]string{"kind": "results"}); n != 1 {
		t.Errorf("withheld results = %v, want 1", n)
	}
	if n := counter(fams, "mcpseal_refusals_total", nil); n != 1 {
		t.Errorf("refusals = %v, want 1", n)
	}
}

// traceHeaderRT adds W3C trace headers to every request a client sends.
type traceHeaderRT struct {
	next               http.RoundTripper
	traceparent, state string
}

func (h traceHeaderRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Traceparent", h.traceparent)
	r.Header.Set("Tracestate", h.state)
	return h.next.RoundTrip(r)
}

// TestGatewayHTTPTraceparentContinuesUpstream: a client that carries its
// trace context only in the HTTP traceparent and tracestate headers (no
// _meta) continues its trace through the gateway: the request span is a
// child of the client's span, and the url route's POST to the server
// carries a traceparent in the same trace naming mcpseal's upstream span,
// with the client's tracestate; the body the server receives has no trace
// context added.
func TestGatewayHTTPTraceparentContinuesUpstream(t *testing.T) {
	t.Parallel()
	recv := &otlpReceiver{}
	col := httptest.NewServer(recv)
	defer col.Close()

	type post struct {
		body               string
		traceparent, state string
		traceparentHeaders int
	}
	var mu sync.Mutex
	var posts []post
	up := echoUpstream(func(r *http.Request, b []byte) {
		mu.Lock()
		posts = append(posts, post{body: string(b), traceparent: r.Header.Get("Traceparent"), state: r.Header.Get("Tracestate"), traceparentHeaders: len(r.Header.Values("Traceparent"))})
		mu.Unlock()
	})
	defer up.Close()
	g := startGateway(t, home(t), fmt.Sprintf(`{"routes":{"remote":{"url":"%s/mcp","private":true}}}`, up.URL),
		"--otlp-endpoint", col.URL)
	traceID, parentID, tp := newTraceparent()
	const state = "congo=t61rcWkgMzE"
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpseal-e2e-http", Version: "1.0.0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: g.url + "/remote", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: traceHeaderRT{next: bearerRT{g.token}, traceparent: tp, state: state}}}
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "MARKER-ARG"}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	g.stop()
	spans := recv.waitSpans(t, "tools/call echo", "mcpseal.upstream")
	call := spansNamed(spans, "tools/call echo")[0]
	if hex.EncodeToString(call.TraceId) != traceID || hex.EncodeToString(call.ParentSpanId) != parentID {
		t.Fatalf("the call span is in trace %x under %x, want %s under %s", call.TraceId, call.ParentSpanId, traceID, parentID)
	}
	var upstream *tracepb.Span
	for _, sp := range spansNamed(spans, "mcpseal.upstream") {
		if bytes.Equal(sp.ParentSpanId, call.SpanId) {
			upstream = sp
		}
	}
	if upstream == nil {
		t.Fatal("no mcpseal.upstream span under the call's span")
	}
	want := "00-" + traceID + "-" + hex.EncodeToString(upstream.SpanId) + "-01"
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, p := range posts {
		if strings.Contains(p.body, "traceparent") {
			t.Errorf("the upstream's body carries trace context the client never put there: %s", p.body)
		}
		if p.traceparentHeaders > 1 {
			t.Errorf("%d traceparent headers upstream", p.traceparentHeaders)
		}
		if !strings.Contains(p.body, `"tools/call"`) {
			continue
		}
		found = true
		if p.traceparent != want || p.state != state {
			t.Errorf("the upstream's tools/call POST carried traceparent %q tracestate %q, want %q %q", p.traceparent, p.state, want, state)
		}
	}
	if !found {
		t.Fatal("the upstream never received the call")
	}
	recv.noSecrets(t, g.token)
}
