package otlp

import (
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestRepeatedIsAnExportRequest: the hand encoding decodes, with the
// official types, as the ExportTraceServiceRequest it stands for, and
// encodes to the same bytes.
func TestRepeatedIsAnExportRequest(t *testing.T) {
	t.Parallel()
	in := []*tracepb.ResourceSpans{
		{SchemaUrl: "a", ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{Name: "x", TraceId: make([]byte, 16), SpanId: make([]byte, 8)}}}}},
		{SchemaUrl: string(make([]byte, 300))}, // a length that needs two varint bytes
	}
	var msgs [][]byte
	for _, rs := range in {
		b, err := proto.Marshal(rs)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, b)
	}
	got := Repeated(msgs)
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(got, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.ResourceSpans) != 2 || req.ResourceSpans[0].ScopeSpans[0].Spans[0].Name != "x" || len(req.ResourceSpans[1].SchemaUrl) != 300 {
		t.Fatalf("decoded %v", &req)
	}
	want, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: in})
	if string(want) != string(got) {
		t.Fatal("the hand encoding differs from the official one")
	}
}
