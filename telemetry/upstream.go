package telemetry

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// The upstream round trip's span.
//
// Every forwarded request has a child span, mcpseal.upstream, for its
// round trip to the server. It is not an SDK span: starting and ending a
// second SDK span per call (its allocation, its sampler, its start
// config, its snapshot and attribute de-duplication at end) was about
// half of what traces cost a call (docs/performance.md, issue 16, third
// pass). The session records the round trip on the request instead, an
// upstreamSpan (span id, start, end, error), and hands it to the batcher
// with the request span when that ends; the exporter writes it into the
// same OTLP message right before its parent, with the fields the SDK
// would have given a child span started under the request span:
//
//	trace_id, trace_state   the request span's
//	span_id                 drawn when the request is forwarded, from the
//	                        generator the SDK draws the request span's from
//	parent_span_id          the request span's
//	name, kind              mcpseal.upstream, CLIENT
//	start, end              forwarded; answered (or, without an answer, the
//	                        request's end)
//	attributes              mcp.method.name (within the SDK's span limits)
//	status                  ERROR when the server answered with an error
//	flags                   the request span's trace flags, parent local
//
// It is exported exactly when its parent is: it has the parent's
// sampling decision (which every sampler mcpseal accepts would give it
// too: parent-based, or by trace id, or always), and it is queued and
// dropped with it. TestSpanEncodingMatchesOTLPExporter checks the bytes
// against the OpenTelemetry exporter's for an SDK child span of the same
// data, and TestSpanTreeOfEachCallPath the tree.

// upstreamName is the round trip's span name.
const upstreamName = "mcpseal.upstream"

// upstreamSpan is one request's round trip to the server; a zero id is
// none.
type upstreamSpan struct {
	id         trace.SpanID
	method     string // the request's methods label
	start, end time.Time
	err        bool         // the server answered with an error
	enc        encodedAttrs // its attribute, encoded under the limits, when the shape has it (spanShape.upEnc)
}

// randomIDs is the SDK's own span and trace id generator (sdktrace's
// randomIDGenerator: math/rand/v2's per-thread generator, seeded by the
// runtime; the SDK does not export it), given to the tracer provider so
// that request spans and upstream spans draw from one source.
type randomIDs struct{}

var _ sdktrace.IDGenerator = randomIDs{}

func (randomIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return newSpanID() }

func (randomIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.NativeEndian.PutUint64(tid[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, newSpanID()
}

func newSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.NativeEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}

// UpstreamSpanContext returns the span context of the mcpseal.upstream
// span of the client request id (its raw JSON-RPC id, as forwarded to the
// server): the request span's trace id, trace state and trace flags, and
// the upstream span's own id. The id is drawn when the gate forwards the
// request (Emitted, which the gate calls before the transport sends the
// frames), so a transport may call this while it builds the request it
// sends upstream, for instance to name the span as the parent in a W3C
// traceparent header; it stays valid until the request is answered. ok
// is false when traces are off, the request is not traced or not sampled,
// not forwarded yet, or already answered. A nil Session returns false.
func (s *Session) UpstreamSpanContext(id []byte) (sc trace.SpanContext, ok bool) {
	if s == nil || s.t.tracer == nil || id == nil {
		return trace.SpanContext{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.pending[jsonrpc.IDKey(id)]
	if r == nil || !r.span.up.id.IsValid() {
		return trace.SpanContext{}, false
	}
	return r.span.sc.WithSpanID(r.span.up.id).WithRemote(false), true
}

// appendUpstreamSpan appends ScopeSpans.spans (field 2): up as the child
// of the span psc, its one attribute bounded as the SDK's span limits
// (OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT, ..._VALUE_LENGTH_LIMIT) would. Its
// times are anchor's wall clock plus their monotonic distance from it
// (the parent's start, so that the child lies within its parent even when
// the wall clock is slewed), or their own wall clock with a zero anchor.
func appendUpstreamSpan(b []byte, psc trace.SpanContext, up upstreamSpan, lim sdktrace.SpanLimits, anchor time.Time) []byte {
	sp := beginMessage(&b, 2)
	tid, psid := psc.TraceID(), psc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, up.id[:])
	if ts := psc.TraceState(); ts.Len() > 0 {
		b = appendString(b, 3, ts.String())
	}
	b = appendBytes(b, 4, psid[:])
	b = appendString(b, 5, upstreamName)
	b = appendVarint(b, 6, uint64(spanKind(trace.SpanKindClient)))
	start := up.start.UnixNano()
	if !anchor.IsZero() {
		start = anchor.UnixNano() + int64(max(0, up.start.Sub(anchor)))
	}
	b = appendFixed64(b, 7, unixNano(start))
	// The end as the SDK stamps it: the start plus the monotonic duration.
	b = appendFixed64(b, 8, unixNano(start+int64(max(0, up.end.Sub(up.start)))))
	enc := up.enc
	if !enc.ok {
		enc = encodeAttrs([]attribute.KeyValue{attribute.String(attrMethod, up.method)}, lim)
	}
	b = append(b, enc.b...)
	b = appendVarint(b, 10, uint64(enc.dropped))
	m := beginMessage(&b, 15) // always present, as the OTLP exporter sends it
	if up.err {
		b = appendVarint(b, 3, 2) // STATUS_CODE_ERROR, no description
	}
	endMessage(&b, m)
	// The parent of this span is the request span: local.
	b = appendFixed32(b, 16, spanFlags(psc.TraceFlags(), trace.SpanContext{}))
	endMessage(&b, sp)
	return b
}
