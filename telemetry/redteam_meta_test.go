package telemetry

import (
	"testing"
)

// TestAttackDuplicateMetaTraceparentReadAsAbsent (red team, issue 16): a client in a legacy
// (2025-06-18) session behind the gateway sends a _meta that names
// traceparent twice (or tracestate twice, or a case variant a
// case-insensitive decoder reads as traceparent), and a different
// traceparent in the HTTP header. The gate forwards the body unchanged
// (legacy sessions never read _meta; params' top level is all it checks
// for duplicates), so the server reads one of the _meta copies (the last,
// for encoding/json and JavaScript). The doc says a malformed or ambiguous
// copy "is never read as if it were absent" and "_meta does not silently
// win over a header that says otherwise"; here member() returns nil for an
// object with a duplicate name, metaContext reported "no context in _meta",
// and the header's context was used and not counted. Now such a _meta is
// a context present and unreadable: ignored and counted.
func TestAttackDuplicateMetaTraceparentReadAsAbsent(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, meta string }{
		{"duplicate traceparent", `{"traceparent":"` + tpB + `","traceparent":"` + tpB + `"}`},
		{"duplicate tracestate", `{"traceparent":"` + tpA + `","tracestate":"a=1","tracestate":"evil=2"}`},
		{"case variant", `{"Traceparent":"` + tpB + `"}`},
		{"upper case", `{"TRACEPARENT":"` + tpB + `"}`},
		{"long s in tracestate", `{"traceparent":"` + tpA + `","traceſtate":"evil=2"}`},
		{"not an object", `["traceparent"]`},
	} {
		s := &Session{t: &Telemetry{m: newMetrics()}}
		sc, _, ok := s.clientContext([]byte(c.meta), headerContext{traceparent: []string{tpA}})
		if ok {
			t.Errorf("%s: _meta %s beside header traceparent %s: header context used (trace %s), ignored counter %d",
				c.name, c.meta, tpA, sc.TraceID, ignored(s.t.m))
		}
	}
	// The same for a params whose _meta member is itself repeated: metaOf
	// reads no _meta at all.
	for _, params := range []string{
		`{"name":"x","_meta":{"traceparent":"` + tpB + `"},"_meta":{"traceparent":"` + tpB + `"}}`,
		`{"name":"x","_meta":{},"_META":{"traceparent":"` + tpB + `"}}`,
	} {
		s := &Session{t: &Telemetry{m: newMetrics()}}
		if _, _, ok := s.clientContext(metaOf([]byte(params)), headerContext{traceparent: []string{tpA}}); ok || ignored(s.t.m) != 1 {
			t.Errorf("params %s: header context used (%v), ignored counter %d", params, ok, ignored(s.t.m))
		}
	}
	// One _meta, its context the header's: read.
	s := &Session{t: &Telemetry{m: newMetrics()}}
	if _, _, ok := s.clientContext(metaOf([]byte(`{"name":"x","_meta":{"traceparent":"`+tpA+`"}}`)), headerContext{traceparent: []string{tpA}}); !ok {
		t.Error("a _meta that agrees with the header was not read")
	}
}
