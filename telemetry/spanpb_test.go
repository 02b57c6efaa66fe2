package telemetry

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/mcpseal/mcpseal/internal/otlp"
)

// referenceClient captures what the OpenTelemetry OTLP exporter would
// send (otlptrace's own transform of the SDK's spans).
type referenceClient struct{ got []*tracepb.ResourceSpans }

func (c *referenceClient) Start(context.Context) error { return nil }
func (c *referenceClient) Stop(context.Context) error  { return nil }
func (c *referenceClient) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	c.got = append(c.got, rs...)
	return nil
}

// reference is the OTLP exporter's message for spans.
func reference(t testing.TB, spans []sdktrace.ReadOnlySpan) []*tracepb.ResourceSpans {
	t.Helper()
	rc := &referenceClient{}
	exp, err := otlptrace.New(context.Background(), rc)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	return rc.got
}

// decodeRequest reads an ExportTraceServiceRequest: field 1, repeated
// ResourceSpans, and nothing else.
func decodeRequest(t testing.TB, b []byte) []*tracepb.ResourceSpans {
	t.Helper()
	var out []*tracepb.ResourceSpans
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			t.Fatalf("not an export request: tag %d/%d (%d)", num, typ, n)
		}
		b = b[n:]
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			t.Fatal("truncated resource_spans")
		}
		b = b[n:]
		rs := &tracepb.ResourceSpans{}
		if err := (proto.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(v, rs); err != nil {
			t.Fatalf("resource_spans: %v", err)
		}
		if len(rs.ProtoReflect().GetUnknown()) != 0 {
			t.Fatal("unknown fields in resource_spans")
		}
		out = append(out, rs)
	}
	return out
}

// noLimits is an origin of spans without limits (and without a resource
// or scope: for SDK spans, which carry their own).
var noLimits = spanOrigin{limits: sdktrace.SpanLimits{AttributeCountLimit: -1, AttributeValueLengthLimit: -1, LinkCountLimit: -1,
	EventCountLimit: -1, AttributePerLinkCountLimit: -1, AttributePerEventCountLimit: -1, AttributeValueDepthLimit: -1}}

// ended is SDK spans as the batcher queues them.
func ended(spans []sdktrace.ReadOnlySpan) endedBatch {
	out := make([]endedSpan, len(spans))
	for i, s := range spans {
		out[i].ReadOnlySpan = s
	}
	return endedBatch{spans: out}
}

// encoded is request spans as the batcher queues them (endRequest),
// under the limits lim.
func encoded(lim sdktrace.SpanLimits, rss ...*reqSpan) endedBatch {
	var b endedBatch
	for _, rs := range rss {
		var e endedSpan
		b.enc, e = appendEnded(b.enc, rs, lim)
		b.spans = append(b.spans, e)
	}
	return b
}

// sortByFirstSpan orders resource spans (the OTLP exporter's order of
// resources is a map's).
func sortByFirstSpan(rss []*tracepb.ResourceSpans) {
	slices.SortFunc(rss, func(a, b *tracepb.ResourceSpans) int {
		return strings.Compare(a.ScopeSpans[0].Spans[0].Name, b.ScopeSpans[0].Spans[0].Name)
	})
}

// assertSameAsReference fails unless mcpseal's encoding of spans decodes
// to exactly what the OpenTelemetry exporter would send.
func assertSameAsReference(t testing.TB, spans []sdktrace.ReadOnlySpan) {
	t.Helper()
	assertEndedSameAsReference(t, spans, ended(spans), noLimits)
}

// assertEndedSameAsReference fails unless mcpseal's encoding of ours
// (request spans with upstream spans) decodes to exactly what the
// OpenTelemetry exporter sends for spans (the same, the upstream spans
// SDK spans, each right before its parent).
func assertEndedSameAsReference(t testing.TB, spans []sdktrace.ReadOnlySpan, ours endedBatch, lim spanOrigin) {
	t.Helper()
	want := reference(t, spans)
	got := decodeRequest(t, appendTraceRequest(nil, ours, lim))
	sortByFirstSpan(want)
	sortByFirstSpan(got)
	if len(got) != len(want) {
		t.Fatalf("%d resource spans, the OTLP exporter %d", len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("resource spans %d differ:\n got %v\nwant %v", i, got[i], want[i])
		}
	}
}

// recorded runs f with two tracer providers of different resources, with
// small limits so that counts of dropped attributes, events and links
// appear, and returns the spans they ended.
func recorded(t testing.TB, f func(a, b trace.TracerProvider)) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	limits := sdktrace.NewSpanLimits()
	limits.AttributeCountLimit, limits.EventCountLimit, limits.LinkCountLimit = 16, 2, 2
	limits.AttributePerEventCountLimit, limits.AttributePerLinkCountLimit = 1, 1
	mk := func(res *resource.Resource) *sdktrace.TracerProvider {
		return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(res), sdktrace.WithRawSpanLimits(limits))
	}
	a := mk(resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "mcpseal"), attribute.Int("n", 3)))
	b := mk(resource.NewSchemaless(attribute.String("service.name", "other")))
	f(a, b)
	return rec.Ended()
}

// TestSpanEncodingMatchesOTLPExporter: the spans mcpseal sends are the
// OpenTelemetry exporter's message, field for field, for every attribute
// type, events, links, remote parents, trace state, error status, dropped
// counts, several scopes and resources, and lengths that need more than
// one byte.
func TestSpanEncodingMatchesOTLPExporter(t *testing.T) {
	t.Parallel()
	spans := recorded(t, func(a, b trace.TracerProvider) {
		ctx := context.Background()
		t0 := time.Unix(1_700_000_000, 123)
		tr := a.Tracer("github.com/mcpseal/mcpseal/telemetry", trace.WithInstrumentationVersion("v1"), trace.WithSchemaURL("https://opentelemetry.io/schemas/1.26.0"),
			trace.WithInstrumentationAttributes(attribute.String("scope.k", "v")))
		ctx, root := tr.Start(ctx, "a root", trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(t0),
			trace.WithAttributes(
				attribute.Bool("b", true), attribute.Bool("f", false), attribute.Int64("i", -42), attribute.Int64("z", 0),
				attribute.Float64("d", 2.5), attribute.String("s", "text"), attribute.String("empty", ""),
				attribute.BoolSlice("bs", []bool{true, false}), attribute.Int64Slice("is", []int64{1, -1, 1 << 40}),
				attribute.Float64Slice("ds", []float64{0.5, -3}), attribute.StringSlice("ss", []string{"x", "", "y"}),
				attribute.String("long", strings.Repeat("l", 200)), attribute.String("longer", strings.Repeat("m", 20000)),
			))
		root.AddEvent("e1", trace.WithTimestamp(t0.Add(time.Millisecond)), trace.WithAttributes(attribute.String("k", "v"), attribute.Int("dropped", 1)))
		root.AddEvent("e2")
		root.AddEvent("e3") // over the limit: counted as dropped
		for i := 0; i < 20; i++ {
			root.SetAttributes(attribute.Int("extra"+strings.Repeat("x", i), i)) // over the limit
		}
		_, child := tr.Start(ctx, "b child", trace.WithSpanKind(trace.SpanKindClient))
		child.SetStatus(codes.Error, "failed")
		child.End(trace.WithTimestamp(t0.Add(time.Second)))
		root.SetStatus(codes.Ok, "ignored for ok")
		root.End()

		remote := trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, SpanID: trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
			TraceFlags: trace.FlagsSampled, Remote: true,
		})
		ts, err := trace.ParseTraceState("vendor=value,other=x")
		if err != nil {
			t.Fatal(err)
		}
		remote = remote.WithTraceState(ts)
		rctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
		other := a.Tracer("second scope")
		_, s := other.Start(rctx, "c remote parent", trace.WithSpanKind(trace.SpanKindServer),
			trace.WithLinks(trace.Link{SpanContext: root.SpanContext(), Attributes: []attribute.KeyValue{attribute.String("l", "1"), attribute.String("l2", "2")}},
				trace.Link{SpanContext: remote}, trace.Link{SpanContext: child.SpanContext()}))
		s.End()

		_, s = b.Tracer("").Start(context.Background(), "d other resource", trace.WithSpanKind(trace.SpanKindProducer))
		s.End()
		_, s = b.Tracer("").Start(context.Background(), "e consumer", trace.WithSpanKind(trace.SpanKindConsumer))
		s.End()
	})
	if len(spans) != 5 {
		t.Fatalf("%d spans recorded", len(spans))
	}
	assertSameAsReference(t, spans)
	assertSameAsReference(t, spans[:1])
	if b := appendTraceRequest(nil, endedBatch{}, noLimits); len(b) != 0 {
		t.Fatalf("no spans encode as %d bytes", len(b))
	}

	// The request spans and upstream spans mcpseal records itself are
	// what the exporter sends for SDK spans of the same data: under a
	// local parent, under a remote one with trace state and other flags
	// and a link, with an error, under each attribute and link limit the
	// SDK reads from OTEL_SPAN_*.
	for _, l := range []struct{ count, length, links int }{{-1, -1, -1}, {0, -1, 0}, {1, 4, 1}, {-1, 0, -1}, {3, 8, -1}, {128, -1, 128}} {
		limits := sdktrace.NewSpanLimits()
		limits.AttributeCountLimit, limits.AttributeValueLengthLimit, limits.LinkCountLimit = l.count, l.length, l.links
		sdkSpans, ours, origin := requestsWithUpstream(t, limits)
		assertEndedSameAsReference(t, sdkSpans, ours, origin)
	}
}

// requestsWithUpstream ends request spans, each with an SDK child span for
// its round trip, and returns them as the OTLP exporter gets them (each
// child before its parent) and as mcpseal records and queues them (a
// reqSpan of the same data, with the child's as its upstreamSpan), and
// the origin the exporter writes mcpseal's with.
func requestsWithUpstream(t testing.TB, limits sdktrace.SpanLimits) (sdkSpans []sdktrace.ReadOnlySpan, ours endedBatch, origin spanOrigin) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	res := resource.NewSchemaless(attribute.String("service.name", "mcpseal"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithRawSpanLimits(limits), sdktrace.WithResource(res))
	tr := tp.Tracer(tracerName)
	origin = spanOrigin{res: res, scope: instrumentation.Scope{Name: tracerName}, limits: limits}
	ts, err := trace.ParseTraceState("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
	if err != nil {
		t.Fatal(err)
	}
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9, 8, 7}, SpanID: trace.SpanID{6, 5}, TraceFlags: 0x03, Remote: true}).WithTraceState(ts)
	session := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2}, SpanID: trace.SpanID{3, 4}, TraceFlags: trace.FlagsSampled})
	t0 := time.Unix(1_700_000_000, 999)
	var reqs []*reqSpan
	for i, c := range []struct {
		parent context.Context
		link   trace.SpanContext
		method string
		err    bool
	}{
		{trace.ContextWithSpanContext(context.Background(), session), trace.SpanContext{}, "tools/call", false},
		{trace.ContextWithRemoteSpanContext(context.Background(), remote), session, "tools/call", true},
		{context.Background(), trace.SpanContext{}, "resources/read", true},
	} {
		start := t0.Add(time.Duration(i) * time.Second)
		opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start)}
		if c.link.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: c.link}))
		}
		ctx, req := tr.Start(c.parent, "tools/call echo", opts...)
		_, up := tr.Start(ctx, upstreamName, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start.Add(time.Millisecond)),
			trace.WithAttributes(attribute.String(attrMethod, c.method)))
		if c.err {
			up.SetStatus(codes.Error, "")
		}
		end := start.Add(time.Duration(300+i) * time.Millisecond)
		up.End(trace.WithTimestamp(end))
		attrs := []attribute.KeyValue{attribute.String(attrMethod, c.method), attribute.String(attrSession, "0123456789abcdef"),
			attribute.String(attrTool, "echo"), attribute.String(attrOperation, "execute_tool"), attribute.String(attrOutcome, "ok")}
		if c.err {
			attrs = append(attrs, attribute.String(attrStatus, "-32603"))
			req.SetStatus(codes.Error, "")
		}
		req.SetAttributes(attrs...)
		reqEnd := end.Add(time.Millisecond)
		req.End(trace.WithTimestamp(reqEnd))
		reqs = append(reqs, &reqSpan{
			sc: req.SpanContext(), parent: trace.SpanContextFromContext(c.parent), record: true, name: "tools/call echo",
			start: start, end: reqEnd, link: c.link, attrs: attrs, err: c.err,
			up: upstreamSpan{id: up.SpanContext().SpanID(), method: c.method, start: start.Add(time.Millisecond), end: end, err: c.err},
		})
	}
	sdkSpans = rec.Ended()
	if len(sdkSpans) != 6 {
		t.Fatalf("%d spans", len(sdkSpans))
	}
	return sdkSpans, encoded(limits, reqs...), origin
}

// TestSpanExporterReusesItsBuffer: a batch is encoded in the buffer the
// previous one used, and a buffer grown past maxKeptBuffer is let go.
func TestSpanExporterReusesItsBuffer(t *testing.T) {
	t.Parallel()
	spans := recorded(t, func(a, _ trace.TracerProvider) {
		_, s := a.Tracer("t").Start(context.Background(), "s")
		s.End()
	})
	b := appendTraceRequest(make([]byte, 0, 4096), ended(spans), noLimits)
	again := appendTraceRequest(b[:0], ended(spans), noLimits)
	if &again[0] != &b[0] || !slices.Equal(again, appendTraceRequest(nil, ended(spans), noLimits)) {
		t.Fatal("the encoding did not reuse its buffer or changed")
	}
}

// TestSpanExporterAfterShutdown: a stopped exporter sends nothing and
// fails nothing (the SDK may still flush into it).
func TestSpanExporterAfterShutdown(t *testing.T) {
	t.Parallel()
	e := &spanExporter{c: nil}
	e.stopped.Store(true)
	spans := recorded(t, func(a, _ trace.TracerProvider) {
		_, s := a.Tracer("t").Start(context.Background(), "s")
		s.End()
	})
	if err := e.ExportSpans(context.Background(), spans); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// FuzzSpanEncoding: whatever text a span carries (a client's trace state,
// a tool's safe name, attribute values of any length), the encoding
// decodes to what the OpenTelemetry exporter sends; text that is not
// UTF-8 (which that exporter cannot send at all) still decodes, with
// U+FFFD for the invalid bytes.
func FuzzSpanEncoding(f *testing.F) {
	f.Add("tools/call echo", "gen_ai.tool.name", "echo", "vendor=value", 3)
	f.Add("", "", "", "", 0)
	f.Add(strings.Repeat("n", 130), "k", strings.Repeat("v", 17000), "a=b,c=d", 200)
	f.Fuzz(func(t *testing.T, name, key, value, state string, n int) {
		spans := recorded(t, func(a, _ trace.TracerProvider) {
			ctx := context.Background()
			if ts, err := trace.ParseTraceState(state); err == nil {
				sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true})
				ctx = trace.ContextWithRemoteSpanContext(ctx, sc.WithTraceState(ts))
			}
			_, s := a.Tracer(key).Start(ctx, name, trace.WithAttributes(attribute.String(key, value), attribute.Int("n", n),
				attribute.StringSlice(value, []string{key, name})))
			s.AddEvent(value, trace.WithAttributes(attribute.Int64(key, int64(n))))
			s.SetStatus(codes.Code(n%3), value)
			s.End()
		})
		if utf8.ValidString(name) && utf8.ValidString(key) && utf8.ValidString(value) { // each: two invalid halves can join into valid UTF-8
			assertSameAsReference(t, spans)
			// The same span with an upstream span of the fuzzed times and
			// status, against an SDK child span of that data.
			parent := spans[0]
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			start := time.Unix(0, int64(n)*1_000_003)
			ctx := trace.ContextWithSpanContext(context.Background(), parent.SpanContext())
			_, child := tp.Tracer(key).Start(ctx, upstreamName, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start),
				trace.WithAttributes(attribute.String(attrMethod, "tools/call")))
			if n%2 == 1 {
				child.SetStatus(codes.Error, "")
			}
			end := start.Add(time.Duration(n%5000) * time.Microsecond)
			child.End(trace.WithTimestamp(end))
			up := upstreamSpan{id: child.SpanContext().SpanID(), method: "tools/call", start: start, end: end, err: n%2 == 1}
			want := reference(t, rec.Ended())[0].ScopeSpans[0].Spans[0]
			enc := appendUpstreamSpan(nil, parent.SpanContext(), up, noLimits.limits, time.Time{})
			got := decodeRequest(t, appendTraceRequest(nil, endedBatch{spans: []endedSpan{{to: int32(len(enc)), n: 1}}, enc: enc}, noLimits))[0].ScopeSpans[0].Spans[0]
			if !proto.Equal(got, want) {
				t.Fatalf("upstream span differs:\n got %v\nwant %v", got, want)
			}
			if key != "" && isASCII(value) {
				checkRequestSpan(t, name, key, value, state, n)
			}
			return
		}
		got := decodeRequest(t, appendTraceRequest(nil, ended(spans), noLimits))
		if len(got) != 1 || got[0].ScopeSpans[0].Spans[0].Name != strings.ToValidUTF8(name, "\uFFFD") {
			t.Fatalf("invalid UTF-8 was not replaced: %v", got)
		}
	})
}

// checkRequestSpan: a request span mcpseal records itself, with fuzzed
// name, attribute, parent trace state, status and limits, encodes as the
// OpenTelemetry exporter sends an SDK span of the same data. (mcpseal's
// attribute values are ASCII: safe names, labels, codes.)
func checkRequestSpan(t *testing.T, name, key, value, state string, n int) {
	t.Helper()
	limits := sdktrace.NewSpanLimits()
	limits.AttributeCountLimit = n%4 - 1
	limits.AttributeValueLengthLimit = n%7 - 1
	limits.LinkCountLimit = n%3 - 1
	rec := tracetest.NewSpanRecorder()
	res := resource.NewSchemaless(attribute.String("service.name", "mcpseal"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithRawSpanLimits(limits), sdktrace.WithResource(res))
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: n%2 == 0})
	if ts, err := trace.ParseTraceState(state); err == nil {
		parent = parent.WithTraceState(ts)
	}
	var link trace.SpanContext
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(time.Unix(0, int64(n)))}
	if n%5 == 0 {
		link = trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{3}, SpanID: trace.SpanID{4}, TraceFlags: trace.TraceFlags(n)})
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: link}))
	}
	_, sp := tp.Tracer(tracerName).Start(trace.ContextWithSpanContext(context.Background(), parent), name, opts...)
	attrs := []attribute.KeyValue{attribute.String(attrMethod, "tools/call"), attribute.String(key+"x", value), attribute.String(attrOutcome, value)}
	sp.SetAttributes(attrs...)
	if n%2 == 1 {
		sp.SetStatus(codes.Error, "")
	}
	end := time.Unix(0, int64(n)).Add(time.Duration(n%9000) * time.Microsecond)
	sp.End(trace.WithTimestamp(end))
	rs := &reqSpan{sc: sp.SpanContext(), parent: parent, record: true, name: name, start: time.Unix(0, int64(n)), end: end,
		link: link, attrs: attrs, err: n%2 == 1}
	origin := spanOrigin{res: res, scope: instrumentation.Scope{Name: tracerName}, limits: limits}
	assertEndedSameAsReference(t, rec.Ended(), encoded(limits, rs), origin)
	assertEncodedAttrsAreTheEncoders(t, rs, limits)
}

// assertEncodedAttrsAreTheEncoders fails unless rs and an upstream span
// of its method encode to the same bytes with their attributes encoded
// beforehand (encodeAttrs, as a session's span shape holds them) as
// without.
func assertEncodedAttrsAreTheEncoders(t testing.TB, rs *reqSpan, lim sdktrace.SpanLimits) {
	t.Helper()
	pre := *rs
	pre.enc = encodeAttrs(rs.attrs, lim)
	if got, want := appendRequestSpan(nil, &pre, lim), appendRequestSpan(nil, rs, lim); !bytes.Equal(got, want) {
		t.Fatalf("request span with its attributes encoded first:\n%x\nencoded at the end:\n%x", got, want)
	}
	for _, method := range []string{"tools/call", "resources/read", ""} {
		up := upstreamSpan{id: trace.SpanID{7}, method: method, start: rs.start, end: rs.end, err: rs.err}
		want := appendUpstreamSpan(nil, rs.sc, up, lim, rs.start)
		up.enc = encodeAttrs([]attribute.KeyValue{attribute.String(attrMethod, method)}, lim)
		if got := appendUpstreamSpan(nil, rs.sc, up, lim, rs.start); !bytes.Equal(got, want) {
			t.Fatalf("upstream span of %q with its attribute encoded first:\n%x\nencoded at the end:\n%x", method, got, want)
		}
	}
}

// TestEncodedAttrsAreTheEncoders: a session's span shapes encode their
// attributes once; for every limit a provider can have, the request and
// upstream spans written with them are the bytes written without.
func TestEncodedAttrsAreTheEncoders(t *testing.T) {
	t.Parallel()
	base := []attribute.KeyValue{attribute.String(attrMethod, "tools/call"), attribute.String(attrSession, "0123456789abcdef"),
		attribute.String(attrTool, "echo"), attribute.String(attrOperation, "execute_tool"), attribute.String(attrProtocol, "2026-07-28")}
	for _, count := range []int{-1, 0, 1, 3, 6, 128} {
		for _, length := range []int{-1, 0, 1, 4, 12, 4096} {
			lim := sdktrace.NewSpanLimits()
			lim.AttributeCountLimit, lim.AttributeValueLengthLimit = count, length
			for _, attrs := range [][]attribute.KeyValue{nil, base, append(base[:5:5], attribute.String(attrOutcome, "ok"))} {
				rs := &reqSpan{sc: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled}),
					record: true, name: "tools/call echo", start: time.Unix(1_700_000_000, 5), end: time.Unix(1_700_000_001, 7), attrs: attrs}
				assertEncodedAttrsAreTheEncoders(t, rs, lim)
			}
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestExporterShutdownDuringStalledExport: a collector that takes the
// request and never answers holds its export, not Shutdown.
func TestExporterShutdownDuringStalledExport(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer col.Close()
	defer close(release)
	u, err := url.Parse(col.URL + "/v1/traces")
	if err != nil {
		t.Fatal(err)
	}
	e := &spanExporter{c: otlp.New(u, false, "", nil, nil, time.Minute)}
	spans := recorded(t, func(a, _ trace.TracerProvider) {
		_, s := a.Tracer("t").Start(context.Background(), "s")
		s.End()
	})
	exported := make(chan error, 1)
	go func() { exported <- e.ExportSpans(context.Background(), spans) }()
	time.Sleep(50 * time.Millisecond) // the export is under way
	done := make(chan struct{})
	go func() { _ = e.Shutdown(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown waited for the stalled export")
	}
	select {
	case err := <-exported:
		t.Fatalf("the stalled export returned early: %v", err)
	default:
	}
}
