package telemetry

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The request span.
//
// Every request through the gate has a span, "METHOD [TOOL]", and under
// it the upstream round trip's (upstream.go). Neither is an SDK span. The
// SDK's span start and end (the recordingSpan and its context, its
// attribute slice and start config, the session span's child count, the
// snapshot and its attribute de-duplication at end, two more clock reads)
// were, after everything else was trimmed, the largest part of what
// traces cost a call (docs/performance.md, issue 16, fourth pass). The
// session records the request span on the request itself instead, with
// what the SDK's tracer would decide at start:
//
//	trace id     the parent's, else a new one; span id a new one: both from
//	             the provider's id generator (randomIDs)
//	sampling     the provider's own sampler (samplerFromEnv, the SDK's
//	             samplers chosen as the SDK chooses them), asked with the
//	             same parameters the tracer passes it (no attributes: the
//	             request span's are set at its end, see spanShape)
//	flags, state the parent's flags with the sampled bit as decided; the
//	             sampler's trace state
//	parent       the session span, or the client's remote context (then
//	             the session span is linked)
//
// and, when it ends, its attributes (under the SDK's span limits), status
// and end. The session span, the contract check, confirmations and
// preflight providers stay SDK spans, children of the request span where
// they belong (through its span context). The batcher queues an ended
// request span with its upstream span; the exporter writes both with the
// resource and instrumentation scope the tracer provider gives its own
// spans. TestSpanEncodingMatchesOTLPExporter checks the bytes against the
// OpenTelemetry exporter's for SDK spans of the same data, and
// TestSpanTreeOfEachCallPath the tree.

// reqSpan is one request span: zero (an invalid span context) when the
// request is not traced.
type reqSpan struct {
	sc        trace.SpanContext
	parent    trace.SpanContext
	record    bool // the sampler said record (and, sampled, export)
	name      string
	start     time.Time
	end       time.Time
	link      trace.SpanContext    // the session span, when parent is a client's; invalid: none
	samplerKV []attribute.KeyValue // attributes the sampler added (the SDK's own add none)
	attrs     []attribute.KeyValue // set at end, before the limits
	enc       encodedAttrs         // attrs encoded under the limits, when the shape has them (spanShape.okEnc)
	err       bool                 // status ERROR, no description
	up        upstreamSpan
}

// spanOrigin is what the tracer provider gives its spans and the exporter
// writes around them: mcpseal's request spans get the same.
type spanOrigin struct {
	res    *resource.Resource
	scope  instrumentation.Scope
	limits sdktrace.SpanLimits
}

// startRequestSpan records the start of a request span named name under
// the parent span context in ctx, as the SDK's tracer.Start would.
func (t *Telemetry) startRequestSpan(ctx context.Context, name string, link trace.SpanContext, now time.Time) reqSpan {
	return t.startRequestSpanUnder(ctx, trace.SpanContextFromContext(ctx), name, link, now)
}

// startRequestSpanUnder is startRequestSpan with psc, the span context in
// ctx, already read (a session keeps its span's).
func (t *Telemetry) startRequestSpanUnder(ctx context.Context, psc trace.SpanContext, name string, link trace.SpanContext, now time.Time) reqSpan {
	var tid trace.TraceID
	var sid trace.SpanID
	if psc.TraceID().IsValid() {
		tid, sid = psc.TraceID(), newSpanID()
	} else {
		tid, sid = randomIDs{}.NewIDs(ctx)
	}
	var sr sdktrace.SamplingResult
	if _, ok := t.sampler.(defaultSampler); ok {
		sr = defaultDecision(psc)
	} else {
		p := sdktrace.SamplingParameters{ParentContext: ctx, TraceID: tid, Name: name, Kind: trace.SpanKindServer}
		if link.IsValid() {
			p.Links = []trace.Link{{SpanContext: link}}
		}
		sr = t.sampler.ShouldSample(p)
	}
	flags := psc.TraceFlags() &^ trace.FlagsSampled
	if sr.Decision == sdktrace.RecordAndSample {
		flags |= trace.FlagsSampled
	}
	return reqSpan{
		sc:        trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, TraceState: sr.Tracestate}),
		parent:    psc,
		record:    sr.Decision != sdktrace.Drop,
		name:      name,
		start:     now,
		link:      link,
		samplerKV: sr.Attributes,
	}
}

// defaultSampler is mcpseal's sampler when OTEL_TRACES_SAMPLER is unset:
// ParentBased(AlwaysSample) with a remote unsampled parent sampled too
// (samplerFromEnv). The tracer provider asks it as any sampler; request
// spans take its decision from defaultDecision, without building the
// sampling parameters and reading the parent context again on every call.
type defaultSampler struct{ sdktrace.Sampler }

// defaultDecision is what defaultSampler decides for a span under psc:
// every delegate it has is AlwaysSample but one, a local parent's that
// is not sampled (NeverSample); each gives the parent's trace state and
// no attributes. TestRedTeamRequestSpanDecisionMatchesTheSDK compares it
// with the SDK's tracer for every kind of parent.
func defaultDecision(psc trace.SpanContext) sdktrace.SamplingResult {
	d := sdktrace.RecordAndSample
	if psc.IsValid() && !psc.IsRemote() && !psc.IsSampled() {
		d = sdktrace.Drop
	}
	return sdktrace.SamplingResult{Decision: d, Tracestate: psc.TraceState()}
}

// traced reports whether the request has a span (sampled or not).
func (rs *reqSpan) traced() bool { return rs.sc.IsValid() }

// context returns a context whose span is the request span, for its
// children.
func (rs *reqSpan) context() context.Context {
	return trace.ContextWithSpanContext(context.Background(), rs.sc)
}

// spanAttrs applies the SDK's attribute count and value length limits to
// the request span's attributes (the sampler's first, as the SDK adds
// them), returning what is kept and how many were dropped.
func spanAttrs(rs *reqSpan, lim sdktrace.SpanLimits) ([]attribute.KeyValue, int) {
	return limitAttrs(rs.samplerKV, rs.attrs, lim)
}

// limitAttrs is spanAttrs of a span with the sampler's attributes first
// and attrs after. mcpseal's attributes are strings with distinct keys,
// and ASCII (safe names, labels, codes, hex), so a length limit cuts
// bytes.
func limitAttrs(samplerKV, attrs []attribute.KeyValue, lim sdktrace.SpanLimits) ([]attribute.KeyValue, int) {
	all := attrs
	if len(samplerKV) > 0 {
		all = dedupe(append(append([]attribute.KeyValue(nil), samplerKV...), attrs...))
	}
	dropped := 0
	if n := lim.AttributeCountLimit; n >= 0 && len(all) > n {
		all, dropped = all[:n], len(all)-n
	}
	if n := lim.AttributeValueLengthLimit; n >= 0 {
		copied := false
		for i, kv := range all {
			if kv.Value.Type() == attribute.STRING && len(kv.Value.AsString()) > n {
				if !copied {
					all, copied = append([]attribute.KeyValue(nil), all...), true // the shape's slice is shared
				}
				all[i] = attribute.String(string(kv.Key), kv.Value.AsString()[:n])
			}
		}
	}
	return all, dropped
}

// encodedAttrs is a span's attributes as its encoder writes them (the
// Span.attributes fields) and how many the limits dropped, when ok. The
// attributes of the requests of one shape and outcome are the same, so a
// session encodes them once (spanShape) instead of at the end of every
// request; TestEncodedAttrsAreTheEncoders checks the bytes are the same.
type encodedAttrs struct {
	b       []byte
	dropped int
	ok      bool
}

// encodeAttrs encodes attrs (no sampler's attributes) under lim.
func encodeAttrs(attrs []attribute.KeyValue, lim sdktrace.SpanLimits) encodedAttrs {
	kept, dropped := limitAttrs(nil, attrs, lim)
	e := encodedAttrs{dropped: dropped, ok: true}
	for _, kv := range kept {
		e.b = appendKeyValue(e.b, 9, kv)
	}
	return e
}

// dedupe keeps the last value of each key, in the order of first
// appearance, as the SDK's span does.
func dedupe(kvs []attribute.KeyValue) []attribute.KeyValue {
	out := kvs[:0]
	at := make(map[attribute.Key]int, len(kvs))
	for _, kv := range kvs {
		if i, ok := at[kv.Key]; ok {
			out[i] = kv
			continue
		}
		at[kv.Key] = len(out)
		out = append(out, kv)
	}
	return out
}

// samplerFromEnv is the SDK's choice of sampler from OTEL_TRACES_SAMPLER
// and OTEL_TRACES_SAMPLER_ARG (sdktrace's samplerFromEnv, which is not
// exported), with mcpseal's default when it is unset: every request
// traced, whatever a client's traceparent says. What the SDK would warn
// about and replace by a default, mcpseal refuses.
func samplerFromEnv(getenv func(string) string) (sdktrace.Sampler, error) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := func() (sdktrace.Sampler, error) {
		if arg == "" {
			return sdktrace.TraceIDRatioBased(1.0), nil
		}
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || v < 0 || v > 1 {
			return nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: a ratio from 0 to 1", arg)
		}
		return sdktrace.TraceIDRatioBased(v), nil
	}
	switch name {
	case "":
		return defaultSampler{sdktrace.ParentBased(sdktrace.AlwaysSample(), sdktrace.WithRemoteParentNotSampled(sdktrace.AlwaysSample()))}, nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return ratio()
	case "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		s, err := ratio()
		if err != nil {
			return nil, err
		}
		return sdktrace.ParentBased(s), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%q: use always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio", name)
}

// appendRequestSpan appends ScopeSpans.spans (field 2): rs as the SDK's
// exporter would write an SDK span of the same data.
func appendRequestSpan(b []byte, rs *reqSpan, lim sdktrace.SpanLimits) []byte {
	sp := beginMessage(&b, 2)
	tid, sid := rs.sc.TraceID(), rs.sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	if ts := rs.sc.TraceState(); ts.Len() > 0 {
		b = appendString(b, 3, ts.String())
	}
	if psid := rs.parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, 4, psid[:])
	}
	b = appendString(b, 5, rs.name)
	b = appendVarint(b, 6, uint64(spanKind(trace.SpanKindServer)))
	start := rs.start.UnixNano()
	b = appendFixed64(b, 7, unixNano(start))
	// The end as the SDK stamps it: the start plus the monotonic duration.
	b = appendFixed64(b, 8, unixNano(start+int64(max(0, rs.end.Sub(rs.start)))))
	var dropped int
	if rs.enc.ok && len(rs.samplerKV) == 0 {
		b, dropped = append(b, rs.enc.b...), rs.enc.dropped
	} else {
		var attrs []attribute.KeyValue
		attrs, dropped = spanAttrs(rs, lim)
		for _, kv := range attrs {
			b = appendKeyValue(b, 9, kv)
		}
	}
	b = appendVarint(b, 10, uint64(dropped))
	// A link the limit leaves no room for is not counted either: the
	// SDK's snapshot reports dropped links only beside kept ones.
	if rs.link.IsValid() && lim.LinkCountLimit != 0 {
		m := beginMessage(&b, 13)
		ltid, lsid := rs.link.TraceID(), rs.link.SpanID()
		b = appendBytes(b, 1, ltid[:])
		b = appendBytes(b, 2, lsid[:])
		b = appendFixed32(b, 6, spanFlags(rs.link.TraceFlags(), rs.link))
		endMessage(&b, m)
	}
	m := beginMessage(&b, 15) // always present, as the OTLP exporter sends it
	if rs.err {
		b = appendVarint(b, 3, 2) // STATUS_CODE_ERROR, no description
	}
	endMessage(&b, m)
	b = appendFixed32(b, 16, spanFlags(rs.sc.TraceFlags(), rs.parent))
	endMessage(&b, sp)
	return b
}
