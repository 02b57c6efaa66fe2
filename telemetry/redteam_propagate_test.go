package telemetry

import (
	"testing"
)

// TestAttackMetaTracestateWithoutTraceparentBesideHeader: the client puts
// a tracestate in params._meta (without a traceparent there) and a
// traceparent plus another tracestate in the HTTP headers. Two copies of
// the trace state disagree; the change says a context present in both
// forms is used only when they are identical, else ignored whole and
// counted. metaContext drops a _meta tracestate that has no traceparent
// beside it as if absent, so the header's context is used and the _meta
// copy (which the server still reads, the body being forwarded unchanged)
// says something else. The same holds for a _meta tracestate that is not
// even a string.
func TestAttackMetaTracestateWithoutTraceparentBesideHeader(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, meta string }{
		{"differing tracestate", `{"tracestate":"rojo=evil"}`},
		{"malformed tracestate", `{"tracestate":5}`},
	} {
		s := &Session{t: &Telemetry{m: newMetrics()}}
		_, st, ok := s.clientContext([]byte(c.meta), headerContext{traceparent: []string{tpA}, tracestate: []string{"congo=a"}})
		if ok {
			t.Errorf("%s: _meta %s beside header tracestate congo=a: context used (tracestate %q), not counted (%d)", c.name, c.meta, st.String(), ignored(s.t.m))
		}
	}
}
