package telemetry

import (
	"context"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/internal/pbwire"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpseal/mcpseal/internal/otlp"
)

// spanExporter is the SDK's span exporter for mcpseal: it encodes a batch
// of finished spans straight into one OTLP ExportTraceServiceRequest
// (opentelemetry/proto/collector/trace/v1) in a buffer it reuses, and
// sends it with the OTLP client. The message is the one the OpenTelemetry
// exporter (otlptrace, its tracetransform and proto.Marshal) sends for the
// same spans, field for field (TestSpanEncodingMatchesOTLPExporter); it
// skips building the protobuf structs of every span and the reflection
// that marshals them, which cost the traced gate about a tenth of its CPU
// (docs/performance.md, issue 16).
//
// spanBatcher sends one batch at a time; the mutex keeps the buffer safe
// for any other caller all the same.
type spanExporter struct {
	c   *otlp.Client
	own spanOrigin // the provider's resource, scope and limits, for mcpseal's own spans

	mu      sync.Mutex // guards buf
	buf     []byte
	stopped atomic.Bool // Shutdown does not wait for an export under way
}

// maxKeptBuffer bounds the encoding buffer kept between batches: one
// batch of spanBatch spans of mcpseal's is far smaller; a larger one
// (attributes from a future change) is encoded, sent and then let go.
const maxKeptBuffer = 4 << 20

// ExportSpans implements sdktrace.SpanExporter.
func (e *spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	ended := make([]endedSpan, len(spans))
	for i, s := range spans {
		ended[i].ReadOnlySpan = s
	}
	return e.exportEnded(ctx, endedBatch{spans: ended})
}

// exportEnded implements endedExporter: spanBatcher's batches, request
// spans with their upstream spans.
func (e *spanExporter) exportEnded(ctx context.Context, batch endedBatch) error {
	if len(batch.spans) == 0 {
		return nil
	}
	if e.stopped.Load() {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buf = appendTraceRequest(e.buf[:0], batch, e.own)
	_, err := e.c.Export(ctx, e.buf)
	if cap(e.buf) > maxKeptBuffer {
		e.buf = nil
	}
	return err
}

// Shutdown implements sdktrace.SpanExporter.
func (e *spanExporter) Shutdown(context.Context) error {
	if e.stopped.CompareAndSwap(false, true) {
		e.c.Close()
	}
	return nil
}

// spanGroup is one ResourceSpans/ScopeSpans pair of a batch.
type spanGroup struct {
	res   *resource.Resource
	scope instrumentation.Scope
	spans []endedSpan
}

// appendTraceRequest appends the ExportTraceServiceRequest of batch to b:
// spans grouped by resource, then by instrumentation scope, in the order
// they first appear (mcpseal has one of each; its own request spans have
// own's), each upstream span right before its parent, in its group.
func appendTraceRequest(b []byte, batch endedBatch, own spanOrigin) []byte {
	origin := func(sd endedSpan) (*resource.Resource, instrumentation.Scope) {
		if sd.ReadOnlySpan == nil {
			return own.res, own.scope
		}
		return sd.Resource(), sd.InstrumentationScope()
	}
	if len(batch.spans) == 0 {
		return b
	}
	var groups []spanGroup
	if res, scope := origin(batch.spans[0]); allOf(batch.spans, res, scope, origin) {
		// The common case, every span the provider's own: one group, the
		// batch as it is.
		groups = []spanGroup{{res: res, scope: scope, spans: batch.spans}}
	} else {
		for _, sd := range batch.spans {
			res, scope := origin(sd)
			i := 0
			for ; i < len(groups); i++ {
				if sameResource(groups[i].res, res) && groups[i].scope == scope {
					break
				}
			}
			if i == len(groups) {
				groups = append(groups, spanGroup{res: res, scope: scope})
			}
			groups[i].spans = append(groups[i].spans, sd)
		}
	}
	for i := 0; i < len(groups); {
		res := groups[i].res
		rs := beginMessage(&b, 1) // ExportTraceServiceRequest.resource_spans
		if res != nil {
			r := beginMessage(&b, 1) // ResourceSpans.resource
			for it := res.Iter(); it.Next(); {
				b = appendKeyValue(b, 1, it.Attribute()) // Resource.attributes
			}
			endMessage(&b, r)
		}
		j := i
		for ; j < len(groups) && sameResource(groups[j].res, res); j++ {
			b = appendScopeSpans(b, groups[j], batch.enc)
		}
		if res != nil {
			b = appendString(b, 3, res.SchemaURL()) // ResourceSpans.schema_url
		}
		endMessage(&b, rs)
		i = j
	}
	return b
}

// allOf reports whether every span of spans has the origin res, scope.
func allOf(spans []endedSpan, res *resource.Resource, scope instrumentation.Scope, origin func(endedSpan) (*resource.Resource, instrumentation.Scope)) bool {
	for _, sd := range spans {
		r, sc := origin(sd)
		if sc != scope || !sameResource(r, res) {
			return false
		}
	}
	return true
}

func sameResource(a, b *resource.Resource) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a == b || a.Equivalent() == b.Equivalent()
}

func appendScopeSpans(b []byte, g spanGroup, enc []byte) []byte {
	ss := beginMessage(&b, 2) // ResourceSpans.scope_spans
	if g.scope != (instrumentation.Scope{}) {
		sc := beginMessage(&b, 1) // ScopeSpans.scope
		b = appendString(b, 1, g.scope.Name)
		b = appendString(b, 2, g.scope.Version)
		for it := g.scope.Attributes.Iter(); it.Next(); {
			b = appendKeyValue(b, 3, it.Attribute())
		}
		endMessage(&b, sc)
	}
	for _, sd := range g.spans {
		if sd.ReadOnlySpan == nil {
			b = append(b, enc[sd.from:sd.to]...) // a request span, encoded when it ended
			continue
		}
		b = appendSpan(b, sd.ReadOnlySpan)
	}
	b = appendString(b, 3, g.scope.SchemaURL) // ScopeSpans.schema_url
	endMessage(&b, ss)
	return b
}

// appendSpan appends ScopeSpans.spans (field 2), an opentelemetry.proto.trace.v1.Span.
func appendSpan(b []byte, sd sdktrace.ReadOnlySpan) []byte {
	sp := beginMessage(&b, 2)
	sc := sd.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	if ts := sc.TraceState(); ts.Len() > 0 {
		b = appendString(b, 3, ts.String())
	}
	parent := sd.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, 4, psid[:])
	}
	b = appendString(b, 5, sd.Name())
	b = appendVarint(b, 6, uint64(spanKind(sd.SpanKind())))
	b = appendFixed64(b, 7, unixNano(sd.StartTime().UnixNano()))
	b = appendFixed64(b, 8, unixNano(sd.EndTime().UnixNano()))
	for _, kv := range sd.Attributes() {
		b = appendKeyValue(b, 9, kv)
	}
	b = appendVarint(b, 10, uint64(clampUint32(sd.DroppedAttributes())))
	for _, ev := range sd.Events() {
		m := beginMessage(&b, 11)
		b = appendFixed64(b, 1, unixNano(ev.Time.UnixNano()))
		b = appendString(b, 2, ev.Name)
		for _, kv := range ev.Attributes {
			b = appendKeyValue(b, 3, kv)
		}
		b = appendVarint(b, 4, uint64(clampUint32(ev.DroppedAttributeCount)))
		endMessage(&b, m)
	}
	b = appendVarint(b, 12, uint64(clampUint32(sd.DroppedEvents())))
	for _, l := range sd.Links() {
		m := beginMessage(&b, 13)
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		b = appendBytes(b, 1, ltid[:])
		b = appendBytes(b, 2, lsid[:])
		for _, kv := range l.Attributes {
			b = appendKeyValue(b, 4, kv)
		}
		b = appendVarint(b, 5, uint64(clampUint32(l.DroppedAttributeCount)))
		b = appendFixed32(b, 6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		endMessage(&b, m)
	}
	b = appendVarint(b, 14, uint64(clampUint32(sd.DroppedLinks())))
	st := sd.Status()
	m := beginMessage(&b, 15) // always present, as the OTLP exporter sends it
	b = appendString(b, 2, st.Description)
	b = appendVarint(b, 3, uint64(statusCode(st.Code)))
	endMessage(&b, m)
	b = appendFixed32(b, 16, spanFlags(sc.TraceFlags(), parent))
	endMessage(&b, sp)
	return b
}

// The OTLP enums' numbers (trace.proto: Span.SpanKind, Status.StatusCode,
// SpanFlags).
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func spanKind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindInternal:
		return 1
	case trace.SpanKindServer:
		return 2
	case trace.SpanKindClient:
		return 3
	case trace.SpanKindProducer:
		return 4
	case trace.SpanKindConsumer:
		return 5
	}
	return 0
}

func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

func unixNano(n int64) uint64 { return uint64(max(0, n)) }

func clampUint32(v int) uint32 {
	if v < 0 {
		return 0
	}
	if int64(v) > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(v)
}

// appendKeyValue appends a common.v1.KeyValue as field num.
func appendKeyValue(b []byte, num pbwire.Number, kv attribute.KeyValue) []byte {
	m := beginMessage(&b, num)
	b = appendString(b, 1, string(kv.Key))
	b = appendAnyValue(b, 2, kv.Value)
	endMessage(&b, m)
	return b
}

// appendAnyValue appends a common.v1.AnyValue as field num, with the
// OpenTelemetry exporter's mapping of attribute types (an unknown type is
// the string "INVALID", an empty value an empty AnyValue).
func appendAnyValue(b []byte, num pbwire.Number, v attribute.Value) []byte {
	m := beginMessage(&b, num)
	switch v.Type() {
	case attribute.BOOL:
		b = pbwire.AppendTag(b, 2, pbwire.VarintType)
		b = pbwire.AppendVarint(b, pbwire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = pbwire.AppendTag(b, 3, pbwire.VarintType)
		b = pbwire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = pbwire.AppendTag(b, 4, pbwire.Fixed64Type)
		b = pbwire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		b = pbwire.AppendTag(b, 1, pbwire.BytesType)
		b = appendUTF8(b, v.AsString())
	case attribute.BYTESLICE:
		b = pbwire.AppendTag(b, 7, pbwire.BytesType)
		b = pbwire.AppendBytes(b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		b = appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		b = appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		b = appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		b = appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		b = appendArray(b, v.AsSlice(), func(x attribute.Value) attribute.Value { return x })
	case attribute.MAP:
		a := beginMessage(&b, 6)
		for _, kv := range v.AsMap() {
			b = appendKeyValue(b, 1, kv)
		}
		endMessage(&b, a)
	case attribute.EMPTY:
	default:
		b = pbwire.AppendTag(b, 1, pbwire.BytesType)
		b = pbwire.AppendString(b, "INVALID")
	}
	endMessage(&b, m)
	return b
}

// appendArray appends AnyValue.array_value (field 5), an ArrayValue of
// the values of xs.
func appendArray[T any](b []byte, xs []T, value func(T) attribute.Value) []byte {
	a := beginMessage(&b, 5)
	for _, x := range xs {
		b = appendAnyValue(b, 1, value(x)) // ArrayValue.values
	}
	endMessage(&b, a)
	return b
}

// Scalars are left out when they hold their type's zero value, as proto3
// marshalling does.

// appendString appends a proto3 string, which must be UTF-8: invalid
// bytes become U+FFFD. (The OTLP exporter's proto.Marshal refuses such a
// string and with it the whole batch; a collector would refuse it too.)
func appendString(b []byte, num pbwire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = pbwire.AppendTag(b, num, pbwire.BytesType)
	return appendUTF8(b, s)
}

func appendUTF8(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return pbwire.AppendString(b, s)
}

func appendBytes(b []byte, num pbwire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = pbwire.AppendTag(b, num, pbwire.BytesType)
	return pbwire.AppendBytes(b, v)
}

func appendVarint(b []byte, num pbwire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = pbwire.AppendTag(b, num, pbwire.VarintType)
	return pbwire.AppendVarint(b, v)
}

func appendFixed64(b []byte, num pbwire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = pbwire.AppendTag(b, num, pbwire.Fixed64Type)
	return pbwire.AppendFixed64(b, v)
}

func appendFixed32(b []byte, num pbwire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = pbwire.AppendTag(b, num, pbwire.Fixed32Type)
	return pbwire.AppendFixed32(b, v)
}

// beginMessage and endMessage: pbwire's, by the names this package's
// encoders use.
func beginMessage(b *[]byte, num pbwire.Number) int { return pbwire.BeginMessage(b, num) }

func endMessage(b *[]byte, at int) { pbwire.EndMessage(b, at) }
