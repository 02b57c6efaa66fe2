package telemetry

import (
	"encoding/json"
	"testing"
)

// TestAttackMetaAliasSpelling (second red team, issue 16): spellings a real MCP decoder reads as the
// trace context that the gate reads as absent, so the header's context is
// used while the server reads another.
//   - The Python SDK's MCPModel has populate_by_name=True and
//     RequestParams.meta is Field(alias="_meta"): pydantic accepts the
//     field name "meta" for "_meta". LookupStrict's fold check does not
//     relate "meta" to "_meta".
//   - Go's encoding/json/v2 with case-insensitive matching (the `case:ignore`
//     tag or MatchCaseInsensitiveNames without MatchCaseSensitiveDelimiter)
//     ignores '-' and '_': "trace-parent", "trace_parent" match traceparent.
func TestAttackMetaAliasSpelling(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, params string }{
		{"pydantic populate_by_name: meta", `{"name":"x","meta":{"traceparent":"` + tpB + `"}}`},
		{"json/v2 nocase: trace-parent", `{"name":"x","_meta":{"trace-parent":"` + tpB + `"}}`},
		{"json/v2 nocase: trace_parent", `{"name":"x","_meta":{"trace_parent":"` + tpB + `"}}`},
		{"json/v2 nocase: separators everywhere", `{"name":"x","_meta":{"T-r_a-c_e-P_a-r_e-n_t":"` + tpB + `"}}`},
		{"json/v2 nocase: _META", `{"name":"x","_META":{"traceparent":"` + tpB + `"}}`},
	} {
		s := &Session{t: &Telemetry{m: newMetrics()}}
		sc, _, ok := s.clientContext(metaOf([]byte(c.params)), headerContext{traceparent: []string{tpA}})
		if ok {
			t.Errorf("%s: params %s beside header %s: header context used (trace %s), not counted (%d)", c.name, c.params, tpA, sc.TraceID, ignored(s.t.m))
		}
	}
}

// FuzzMetaContextVsEncodingJSON: whenever Go's encoding/json (case-
// insensitive, last wins) reads a traceparent or tracestate from _meta,
// metaContext must not say "absent".
func FuzzMetaContextVsEncodingJSON(f *testing.F) {
	for _, s := range []string{`{"traceparent":"x"}`, `{"Traceparent":"x"}`, `{"trace\u0070arent":"x"}`, `{"traceſtate":"x"}`, `{"a":1,"TRACESTATE":"y"}`, `{"tr\u0061cestate":"y"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, meta []byte) {
		var v struct {
			TP *string `json:"traceparent"`
			TS *string `json:"tracestate"`
		}
		if json.Unmarshal(meta, &v) != nil || (v.TP == nil && v.TS == nil) {
			return
		}
		if _, _, present, _ := metaContext(meta); !present {
			t.Errorf("encoding/json reads a trace context from %q (tp %v ts %v); metaContext says absent", meta, v.TP != nil, v.TS != nil)
		}
	})
}
