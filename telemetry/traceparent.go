package telemetry

import (
	"encoding/hex"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// A client's trace context is the client's to choose, and so an
// attacker's: it is read strictly and never trusted for anything but the
// parent of a span. Anything that is not exactly what W3C Trace Context
// level 1 writes is ignored (the request is traced as a child of its
// session), never repaired, and the message is forwarded unchanged either
// way.
const (
	// traceparentLen is the only length version 00 has.
	traceparentLen = 55
	// maxTracestate is W3C Trace Context's own bound on what a vendor
	// must propagate (512 characters, 32 members).
	maxTracestate        = 512
	maxTracestateMembers = 32
)

// parseTraceparent reads a version 00 traceparent: "00-" 32 lowercase hex
// "-" 16 lowercase hex "-" 2 lowercase hex, with a trace id and parent id
// that are not all zeros. Other versions are refused: a later version may
// mean something this reader cannot check.
func parseTraceparent(s string) (trace.SpanContextConfig, bool) {
	var c trace.SpanContextConfig
	if len(s) != traceparentLen || s[0:3] != "00-" || s[35] != '-' || s[52] != '-' {
		return c, false
	}
	if !lowerHex(s[3:35]) || !lowerHex(s[36:52]) || !lowerHex(s[53:55]) {
		return c, false
	}
	if _, err := hex.Decode(c.TraceID[:], []byte(s[3:35])); err != nil {
		return c, false
	}
	if _, err := hex.Decode(c.SpanID[:], []byte(s[36:52])); err != nil {
		return c, false
	}
	var f [1]byte
	if _, err := hex.Decode(f[:], []byte(s[53:55])); err != nil {
		return c, false
	}
	if !c.TraceID.IsValid() || !c.SpanID.IsValid() {
		return c, false
	}
	c.TraceFlags = trace.TraceFlags(f[0]) & trace.FlagsSampled
	c.Remote = true
	return c, true
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// parseTracestate reads a tracestate header value within W3C's bounds;
// anything else is refused whole (the span then carries none).
func parseTracestate(s string) (trace.TraceState, bool) {
	if s == "" {
		return trace.TraceState{}, true
	}
	if len(s) > maxTracestate || strings.Count(s, ",") >= maxTracestateMembers {
		return trace.TraceState{}, false
	}
	ts, err := trace.ParseTraceState(s)
	if err != nil {
		return trace.TraceState{}, false
	}
	return ts, true
}
