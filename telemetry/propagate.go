package telemetry

import (
	"bytes"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// Trace context over HTTP (the gateway's front door and its url routes).
//
// A client may carry its trace context in params._meta (as MCP does) or
// in the W3C traceparent and tracestate headers of the POST that carries
// the request, or both. Each copy present is read with the same strict
// parser; the context is used only when every copy present is well formed
// and, when both are present, they are the same (traceparent and
// tracestate byte for byte). A malformed copy, two traceparent header
// lines, or two copies that disagree are ambiguous: the client's context
// is ignored whole (the request is traced under its session) and
// mcpseal_trace_context_ignored_total counts it. It is never read as if
// the bad copy were absent.
//
// Upstream, a url route's POST carries a traceparent naming mcpseal's
// mcpseal.upstream span (and the span's tracestate, the client's when it
// sent one), so the server's spans are children of mcpseal's. The body is
// forwarded unchanged: a _meta.traceparent in it still names the client's
// span.

// headerContext is the trace headers of the HTTP request that carries the
// client message the gate takes next.
type headerContext struct {
	traceparent []string
	tracestate  []string
}

// HeaderContext hands the session the W3C trace headers (all the values
// of each) of the HTTP request carrying the next client message. The
// transport calls it under its lock just before the gate takes the
// message, and again with nil, nil after. A nil Session ignores it.
func (s *Session) HeaderContext(traceparent, tracestate []string) {
	if s == nil || s.t.tracer == nil {
		return
	}
	s.mu.Lock()
	s.hdr = headerContext{traceparent: traceparent, tracestate: tracestate}
	s.mu.Unlock()
}

// UpstreamHeaders returns the traceparent and tracestate to send with the
// request id forwarded to the server: those of the request's
// mcpseal.upstream span. It returns "", "" when traces are off or the
// request is not one the session traces (the gate's own requests).
func (s *Session) UpstreamHeaders(id []byte) (traceparent, tracestate string) {
	if s == nil || s.t.tracer == nil || id == nil {
		return "", ""
	}
	sc, ok := s.UpstreamSpanContext(id)
	if !ok || !sc.IsValid() {
		return "", ""
	}
	return formatTraceparent(sc), sc.TraceState().String()
}

// mayNameTrace reports whether b can hold a member name that is
// traceparent or tracestate, or one a lenient decoder reads as either
// (jsonrpc.LookupUnaliased): b holds "trace" in any case, '_' and '-'
// anywhere between its letters, or an escape (a name with an escape is
// not its bytes). Their letters have no fold outside ASCII but the long s
// (U+017F), which comes after "trace".
func mayNameTrace(b []byte) bool {
	if bytes.IndexByte(b, '\\') >= 0 {
		return true
	}
	const want = "trace"
	for i := range b {
		if b[i]|0x20 != 't' {
			continue
		}
		k := 1
		for j := i + 1; j < len(b) && k < len(want); j++ {
			switch c := b[j]; {
			case c == '_' || c == '-':
			case c|0x20 == want[k]:
				k++
			default:
				j = len(b)
			}
		}
		if k == len(want) {
			return true
		}
	}
	return false
}

// formatTraceparent writes sc as a version 00 traceparent.
func formatTraceparent(sc trace.SpanContext) string {
	flags := "00"
	if sc.IsSampled() {
		flags = "01"
	}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + flags
}

// clientContext reads the client's trace context from _meta and from the
// HTTP headers (see above); a malformed or ambiguous one is counted and
// ignored.
func (s *Session) clientContext(meta []byte, hdr headerContext) (trace.SpanContextConfig, trace.TraceState, bool) {
	mTP, mTS, inMeta, okMeta := metaContext(meta)
	hTP, hTS, inHdr, okHdr := headerValues(hdr)
	if !inMeta && !inHdr {
		return trace.SpanContextConfig{}, trace.TraceState{}, false
	}
	tp, ts := mTP, mTS
	if !inMeta {
		tp, ts = hTP, hTS
	}
	c, okTP := parseTraceparent(tp)
	st, okTS := parseTracestate(ts)
	agree := !inMeta || !inHdr || (mTP == hTP && mTS == hTS)
	if !okMeta || !okHdr || !okTP || !okTS || !agree {
		s.t.m.badContext.Inc()
		return trace.SpanContextConfig{}, trace.TraceState{}, false
	}
	return c, st, true
}

// metaContext reads _meta.traceparent and tracestate as strings: present
// when either is; ok when both are JSON strings (tracestate may be
// absent). A tracestate with no traceparent beside it is present and not
// ok, as in the headers: read as absent, a header context beside it would
// be used while the _meta copy the server reads says something else. So
// is a _meta that is not one unambiguous object (a name twice, a name a
// lenient decoder reads as either, or not an object but naming "trace", as
// ambiguousMeta does): the server may read a context from it that the
// gate cannot tell.
func metaContext(meta []byte) (tp, ts string, present, ok bool) {
	if meta == nil {
		return "", "", false, true
	}
	if !mayNameTrace(meta) {
		// No member can be named traceparent or tracestate, whatever
		// meta is: the usual 2026-07-28 _meta, read without a member
		// slice. The answer is the one the full read gives.
		return "", "", false, true
	}
	var v [2][]byte
	if jsonrpc.LookupUnaliased(meta, []string{"traceparent", "tracestate"}, v[:]) != nil {
		return "", "", true, false
	}
	rawTP, rawTS := v[0], v[1]
	if rawTP == nil {
		return "", "", rawTS != nil, rawTS == nil
	}
	tp, err := jsonrpc.DecodeString(rawTP)
	if err != nil {
		return "", "", true, false
	}
	if rawTS != nil {
		if ts, err = jsonrpc.DecodeString(rawTS); err != nil {
			return "", "", true, false
		}
	}
	return tp, ts, true, true
}

// headerValues reads the HTTP headers: exactly one traceparent line;
// tracestate lines are one list (RFC 9110 field combination).
func headerValues(h headerContext) (tp, ts string, present, ok bool) {
	if len(h.traceparent) == 0 {
		return "", "", len(h.tracestate) != 0, len(h.tracestate) == 0
	}
	if len(h.traceparent) != 1 || len(h.tracestate) > maxTracestateMembers {
		return "", "", true, false
	}
	return h.traceparent[0], strings.Join(h.tracestate, ","), true, true
}
