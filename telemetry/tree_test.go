package telemetry

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// spanCollector is an OTLP/HTTP receiver: the spans of every trace
// export request.
type spanCollector struct {
	t     testing.TB
	mu    sync.Mutex
	spans []*tracepb.Span
	res   int // resource spans seen
}

func (c *spanCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/traces" {
		return // the meters, pushed to the same endpoint
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range decodeRequest(c.t, body) {
		c.res++
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
}

// tracedSession runs f on a traced session and returns the spans the
// collector received once the telemetry closed.
func tracedSession(t *testing.T, f func(s *Session)) []*tracepb.Span {
	t.Helper()
	col := &spanCollector{t: t}
	srv := httptest.NewServer(col)
	defer srv.Close()
	tel, err := Start(Config{OTLPEndpoint: srv.URL, Getenv: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	s := tel.Session("srv", "label")
	f(s)
	if err := tel.Close(); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	return col.spans
}

func peeked(t *testing.T, frame string) jsonrpc.Message {
	t.Helper()
	m, err := jsonrpc.Peek([]byte(frame))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// callFrame is a tools/call of tool with id; meta, when set, is its _meta.
func callFrame(id int, tool, meta string) string {
	p := `{"name":"` + tool + `","arguments":{"text":"MARKER-ARG"}`
	if meta != "" {
		p += `,"_meta":` + meta
	}
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":` + p + `}}`
}

func resultFrame(id int) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"result":{"content":[{"type":"text","text":"MARKER-RESULT"}]}}`
}

func errorFrame(id, code int, reason string) string {
	data := ""
	if reason != "" {
		data = `,"data":{"reason":"` + reason + `"}`
	}
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"error":{"code":` + strconv.Itoa(code) + `,"message":"MARKER-RESULT"` + data + `}}`
}

// The gate's steps, as a session's observer sees them.
// took shows s a client's request; a tools/call's tool is taken for one
// of the verified contract, as the gate's Call hook tells the observer
// (decide) before anything else of the call.
func took(t *testing.T, s *Session, frame string) {
	t.Helper()
	m := peeked(t, frame)
	s.Took(gate.ToClient, m)
	if m.Method == "tools/call" {
		s.decide(gate.CallInfo{Tool: contract.Definition{Name: paramString(m.Params, "name")}, Request: jsonrpc.IDKey(m.ID)}, gate.Verdict{Kind: gate.Allow})
	}
}

// tookUnknown shows s a tools/call of a tool outside the verified
// contract: the gate refuses it before any hook.
func tookUnknown(t *testing.T, s *Session, frame string) { s.Took(gate.ToClient, peeked(t, frame)) }
func answered(t *testing.T, s *Session, frame string) {
	s.Took(gate.ToServer, peeked(t, frame))
}
func forwarded(s *Session, frame string) {
	s.Emitted([]gate.Out{{To: gate.ToServer, Frame: []byte(frame)}})
}
func delivered(s *Session, frame string) {
	s.Emitted([]gate.Out{{To: gate.ToClient, Frame: []byte(frame)}})
}

// treeSpan is what the tree test compares of a span: everything but its
// ids and times, which it checks as relations.
type treeSpan struct {
	name, parent string
	kind         tracepb.Span_SpanKind
	attrs        string // key=value, sorted, ; separated
	status       tracepb.Status_StatusCode
}

func attrsOf(s *tracepb.Span) string {
	var kv []string
	for _, a := range s.Attributes {
		v := a.Value.GetStringValue()
		if a.Key == attrSession {
			v = "SESSION"
		}
		kv = append(kv, a.Key+"="+v)
	}
	slices.Sort(kv)
	return strings.Join(kv, ";")
}

// checkTree fails unless spans are exactly want (in any order), each
// child in its parent's trace, with its parent's trace state and flags,
// within its parent's time, with ids that are valid and unique.
func checkTree(t *testing.T, spans []*tracepb.Span, want []treeSpan) {
	t.Helper()
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		id := hex.EncodeToString(s.SpanId)
		if len(s.SpanId) != 8 || len(s.TraceId) != 16 || byID[id] != nil || bytes.Equal(s.SpanId, make([]byte, 8)) {
			t.Fatalf("span %q: id %x in trace %x (invalid or repeated)", s.Name, s.SpanId, s.TraceId)
		}
		byID[id] = s
		if s.StartTimeUnixNano == 0 || s.EndTimeUnixNano < s.StartTimeUnixNano {
			t.Errorf("span %q ends at %d before its start %d", s.Name, s.EndTimeUnixNano, s.StartTimeUnixNano)
		}
		if bytes.Contains([]byte(s.String()), []byte("MARKER")) {
			t.Errorf("span %q carries content", s.Name)
		}
	}
	var got []treeSpan
	for _, s := range spans {
		ts := treeSpan{name: s.Name, kind: s.Kind, attrs: attrsOf(s), status: s.Status.GetCode()}
		if p := byID[hex.EncodeToString(s.ParentSpanId)]; p != nil {
			ts.parent = p.Name
			if !bytes.Equal(p.TraceId, s.TraceId) || p.TraceState != s.TraceState || p.Flags&0xff != s.Flags&0xff || s.Flags&flagIsRemote != 0 {
				t.Errorf("span %q: trace %x state %q flags %x, its parent's %x %q %x", s.Name, s.TraceId, s.TraceState, s.Flags, p.TraceId, p.TraceState, p.Flags)
			}
			if s.StartTimeUnixNano < p.StartTimeUnixNano || s.EndTimeUnixNano > p.EndTimeUnixNano {
				t.Errorf("span %q [%d, %d] is not within its parent %q [%d, %d]", s.Name, s.StartTimeUnixNano, s.EndTimeUnixNano, p.Name, p.StartTimeUnixNano, p.EndTimeUnixNano)
			}
		}
		if s.Flags&flagHasIsRemote == 0 || len(s.Events) != 0 || s.DroppedAttributesCount != 0 || s.Status.GetMessage() != "" {
			t.Errorf("span %q: flags %x, %d events, %d dropped, status %q", s.Name, s.Flags, len(s.Events), s.DroppedAttributesCount, s.Status.GetMessage())
		}
		got = append(got, ts)
	}
	cmp := func(a, b treeSpan) int {
		return strings.Compare(a.name+"\x00"+a.parent+"\x00"+a.attrs, b.name+"\x00"+b.parent+"\x00"+b.attrs)
	}
	slices.SortFunc(got, cmp)
	slices.SortFunc(want, cmp)
	if !slices.Equal(got, want) {
		t.Errorf("span tree:\n got %v\nwant %v", got, want)
	}
}

const (
	server   = tracepb.Span_SPAN_KIND_SERVER
	client   = tracepb.Span_SPAN_KIND_CLIENT
	internal = tracepb.Span_SPAN_KIND_INTERNAL
	unset    = tracepb.Status_STATUS_CODE_UNSET
	failed   = tracepb.Status_STATUS_CODE_ERROR
)

var (
	sessionSpan = treeSpan{name: "mcpseal.session", kind: internal, attrs: "mcp.session.id=SESSION;mcpseal.server.id=srv;mcpseal.server.label=label"}
	callAttrs   = "gen_ai.operation.name=execute_tool;gen_ai.tool.name=echo;mcp.method.name=tools/call;mcp.session.id=SESSION;"
	upstream    = treeSpan{name: "mcpseal.upstream", parent: "tools/call echo", kind: client, attrs: "mcp.method.name=tools/call"}
)

// TestSpanTreeOfEachCallPath: the spans exported for each way a
// tools/call goes through the gate, as they were when the upstream round
// trip was an SDK span of its own (issue 16's third pass synthesizes it
// in the exporter; the tree must not change): names, parents, kinds,
// attributes and statuses, with ids, trace ids, trace state, flags and
// times checked as relations.
func TestSpanTreeOfEachCallPath(t *testing.T) {
	t.Parallel()
	ok := treeSpan{name: "tools/call echo", parent: "mcpseal.session", kind: server, attrs: callAttrs + "mcpseal.outcome=ok"}
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s *Session)
		want []treeSpan
	}{{
		name: "forwarded and answered",
		run: func(t *testing.T, s *Session) {
			took(t, s, callFrame(1, "echo", ""))
			forwarded(s, callFrame(1, "echo", ""))
			answered(t, s, resultFrame(1))
			delivered(s, resultFrame(1))
		},
		want: []treeSpan{sessionSpan, ok, upstream},
	}, {
		name: "forwarded and answered with the server's error",
		run: func(t *testing.T, s *Session) {
			took(t, s, callFrame(1, "echo", ""))
			forwarded(s, callFrame(1, "echo", ""))
			answered(t, s, errorFrame(1, -32603, ""))
			delivered(s, errorFrame(1, -32603, ""))
		},
		want: []treeSpan{sessionSpan,
			{name: "tools/call echo", parent: "mcpseal.session", kind: server, status: failed,
				attrs: "error.type=-32603;" + callAttrs + "mcpseal.outcome=error;rpc.response.status_code=-32603"},
			{name: "mcpseal.upstream", parent: "tools/call echo", kind: client, attrs: "mcp.method.name=tools/call", status: failed}},
	}, {
		// A tool outside the verified contract: its name, the client's, is
		// in no span.
		name: "refused by the gate before forwarding",
		run: func(t *testing.T, s *Session) {
			tookUnknown(t, s, callFrame(2, "echo", ""))
			delivered(s, errorFrame(2, -32020, "unknown-tool"))
		},
		want: []treeSpan{sessionSpan, {name: "tools/call", parent: "mcpseal.session", kind: server, status: failed,
			attrs: "error.type=-32020;mcp.method.name=tools/call;mcp.session.id=SESSION;mcpseal.outcome=refused;mcpseal.refusal.code=unknown-tool;rpc.response.status_code=-32020"}},
	}, {
		name: "refused by the host's policy",
		run: func(t *testing.T, s *Session) {
			took(t, s, callFrame(2, "echo", ""))
			delivered(s, errorFrame(2, -32011, "policy"))
		},
		want: []treeSpan{sessionSpan, {name: "tools/call echo", parent: "mcpseal.session", kind: server, status: failed,
			attrs: "error.type=-32011;" + callAttrs + "mcpseal.outcome=refused;mcpseal.refusal.code=policy;rpc.response.status_code=-32011"}},
	}, {
		name: "held for confirmation, then forwarded",
		run: func(t *testing.T, s *Session) {
			h := s.Hooks(gate.Hooks{Call: func(gate.CallInfo) gate.Verdict { return gate.Verdict{Kind: gate.Confirm} }})
			took(t, s, callFrame(3, "echo", ""))
			h.Call(gate.CallInfo{Tool: contract.Definition{Name: "echo"}, Request: "n:3"})
			h.Event(gate.Event{Op: "confirm", Outcome: "asked", Name: "echo", Request: "n:3"})
			h.Event(gate.Event{Op: "confirm", Outcome: "accepted", Name: "echo", Request: "n:3"})
			forwarded(s, callFrame(3, "echo", ""))
			answered(t, s, resultFrame(3))
			delivered(s, resultFrame(3))
		},
		want: []treeSpan{sessionSpan, ok, upstream,
			{name: "mcpseal.confirm", parent: "tools/call echo", kind: internal, attrs: "gen_ai.tool.name=echo;mcpseal.outcome=accepted"}},
	}, {
		name: "the server never answers before the session ends",
		run: func(t *testing.T, s *Session) {
			took(t, s, callFrame(4, "echo", ""))
			forwarded(s, callFrame(4, "echo", ""))
			_ = s.Close()
			answered(t, s, resultFrame(4)) // after the end: nothing
		},
		want: []treeSpan{sessionSpan, upstream,
			{name: "tools/call echo", parent: "mcpseal.session", kind: server, attrs: callAttrs + "mcpseal.outcome=unanswered"}},
	}, {
		name: "cancelled by the client",
		run: func(t *testing.T, s *Session) {
			took(t, s, callFrame(5, "echo", ""))
			forwarded(s, callFrame(5, "echo", ""))
			cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`
			took(t, s, cancel)
			forwarded(s, cancel)
			_ = s.Close()
		},
		want: []treeSpan{sessionSpan, upstream,
			{name: "tools/call echo", parent: "mcpseal.session", kind: server, attrs: callAttrs + "mcpseal.outcome=unanswered"}},
	}, {
		name: "cancelled by mcpseal's call timeout, the late answer dropped",
		run: func(t *testing.T, s *Session) {
			took(t, s, callFrame(6, "echo", ""))
			forwarded(s, callFrame(6, "echo", ""))
			s.Emitted([]gate.Out{{To: gate.ToClient, Frame: []byte(errorFrame(6, -32021, "call-timeout"))},
				{To: gate.ToServer, Frame: []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`)}})
			answered(t, s, resultFrame(6))
		},
		want: []treeSpan{sessionSpan, upstream, {name: "tools/call echo", parent: "mcpseal.session", kind: server, status: failed,
			attrs: "error.type=-32021;" + callAttrs + "mcpseal.outcome=refused;mcpseal.refusal.code=call-timeout;rpc.response.status_code=-32021"}},
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			spans := tracedSession(t, func(s *Session) { c.run(t, s) })
			checkTree(t, spans, c.want)
		})
	}
}

// TestSpanTreeContinuesTheClientsTrace: a call with the client's
// traceparent and tracestate is a child of the client's span, and its
// upstream round trip is in the client's trace with its trace state.
func TestSpanTreeContinuesTheClientsTrace(t *testing.T) {
	t.Parallel()
	const tid, pid = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	meta := `{"traceparent":"00-` + tid + `-` + pid + `-01","tracestate":"congo=t61rcWkgMzE"}`
	spans := tracedSession(t, func(s *Session) {
		took(t, s, callFrame(1, "echo", meta))
		forwarded(s, callFrame(1, "echo", meta))
		answered(t, s, resultFrame(1))
		delivered(s, resultFrame(1))
	})
	checkTree(t, spans, []treeSpan{sessionSpan, upstream,
		{name: "tools/call echo", kind: server, attrs: callAttrs + "mcpseal.outcome=ok"}})
	for _, s := range spans {
		if s.Name == "mcpseal.session" {
			continue
		}
		flags := uint32(0x101)
		if s.Name == "tools/call echo" {
			flags |= flagIsRemote // its parent is the client's
		}
		if hex.EncodeToString(s.TraceId) != tid || s.TraceState != "congo=t61rcWkgMzE" || s.Flags != flags {
			t.Errorf("%s: trace %x, state %q, flags %x", s.Name, s.TraceId, s.TraceState, s.Flags)
		}
		if s.Name == "tools/call echo" && (hex.EncodeToString(s.ParentSpanId) != pid || len(s.Links) != 1) {
			t.Errorf("the call's parent %x, links %v", s.ParentSpanId, s.Links)
		}
	}
}

// TestUpstreamSpanContextNamesTheExportedSpan: the context a transport
// gets for a forwarded request (to name mcpseal's span upstream) is that
// of the mcpseal.upstream span exported later: same trace, same span id,
// the request span's flags; none before forwarding, after the answer, or
// without traces.
func TestUpstreamSpanContextNamesTheExportedSpan(t *testing.T) {
	t.Parallel()
	id := []byte("7")
	var sc trace.SpanContext
	spans := tracedSession(t, func(s *Session) {
		took(t, s, callFrame(7, "echo", ""))
		if _, ok := s.UpstreamSpanContext(id); ok {
			t.Error("a context before the request was forwarded")
		}
		forwarded(s, callFrame(7, "echo", ""))
		var ok bool
		if sc, ok = s.UpstreamSpanContext(id); !ok || !sc.IsValid() || !sc.IsSampled() || sc.IsRemote() {
			t.Fatalf("forwarded: %v %v", sc, ok)
		}
		if again, _ := s.UpstreamSpanContext([]byte(" 7 ")); !again.Equal(sc) {
			t.Error("the same id, spelled with spaces, named another span")
		}
		answered(t, s, resultFrame(7))
		delivered(s, resultFrame(7))
		if _, ok := s.UpstreamSpanContext(id); ok {
			t.Error("a context after the answer")
		}
	})
	sid, tid := sc.SpanID(), sc.TraceID()
	n := 0
	for _, s := range spans {
		if s.Name == upstreamName {
			n++
			if !bytes.Equal(s.SpanId, sid[:]) || !bytes.Equal(s.TraceId, tid[:]) || s.Flags&0xff != uint32(sc.TraceFlags()) {
				t.Errorf("exported upstream span %x in trace %x, the transport was given %v", s.SpanId, s.TraceId, sc)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d upstream spans", n)
	}

	// Metrics alone: no span, no context.
	tel, err := Start(Config{MetricsListen: "127.0.0.1:0", Getenv: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	s := tel.Session("srv", "label")
	took(t, s, callFrame(7, "echo", ""))
	forwarded(s, callFrame(7, "echo", ""))
	if _, ok := s.UpstreamSpanContext(id); ok {
		t.Error("a context without traces")
	}
	var none *Session
	if _, ok := none.UpstreamSpanContext(id); ok {
		t.Error("a nil Session gave a context")
	}
}

// TestUpstreamSpanQueuedAndDroppedWithItsParent: a request span and its
// upstream span take one place in the batcher's queue, are exported in one
// batch, and when the queue is full are dropped (and counted) together;
// an unsampled request exports neither, and nothing stays behind.
func TestUpstreamSpanQueuedAndDroppedWithItsParent(t *testing.T) {
	t.Parallel()
	fe, h := &fakeExporter{}, &handled{}
	b := newSpanBatcher(fe, h.handle, sdktrace.NewSpanLimits(), time.Hour, 8, 2)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b), sdktrace.WithIDGenerator(randomIDs{}))
	sampler, err := samplerFromEnv(func(string) string { return "parentbased_always_on" })
	if err != nil {
		t.Fatal(err)
	}
	tel := &Telemetry{sampler: sampler}
	end := func(rs reqSpan) {
		rs.end = time.Now()
		rs.up = upstreamSpan{id: newSpanID(), method: "tools/call", start: rs.start, end: rs.end}
		b.endRequest(&rs)
	}
	for i := 0; i < 3; i++ {
		end(tel.startRequestSpan(context.Background(), "tools/call echo", trace.SpanContext{}, time.Now()))
	}
	unsampled := tel.startRequestSpan(trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, Remote: true})), "tools/call echo", trace.SpanContext{}, time.Now())
	if unsampled.sc.IsSampled() || !unsampled.traced() {
		t.Fatal("a parent-based sampler sampled a child of an unsampled parent")
	}
	end(unsampled)
	b.mu.Lock()
	queued, dropped := len(b.queue), b.dropped
	b.mu.Unlock()
	if queued != 2 || dropped != 2 {
		t.Fatalf("queued %d (bound 2), dropped %d spans (want the third pair)", queued, dropped)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, bs := fe.total(); n != 4 || len(bs) != 1 {
		t.Fatalf("%d spans exported in batches %v, want 4 in one", n, bs)
	}
	if !strings.Contains(h.all(), "2 spans dropped") {
		t.Fatalf("drops reported: %q", h.all())
	}
}
