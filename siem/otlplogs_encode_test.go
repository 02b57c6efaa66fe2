package siem

import (
	"bytes"
	"testing"
	"time"
	"unicode/utf8"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcpseal/mcpseal/audit"
)

// referenceResourceLogs is the message as the sink built it with the OTLP
// message types and proto.Marshal before it was encoded by hand.
func referenceResourceLogs(name string, lines []audit.Line, now uint64) ([]byte, error) {
	recs := make([]*logspb.LogRecord, len(lines))
	for i, l := range lines {
		sev, text := logspb.SeverityNumber_SEVERITY_NUMBER_INFO, "INFO"
		if severity(l) == sevNotice {
			sev, text = logspb.SeverityNumber_SEVERITY_NUMBER_WARN, "WARN"
		}
		var at uint64
		if t, err := time.Parse(time.RFC3339Nano, lineMember(l.Raw, "time")); err == nil && t.UnixNano() > 0 {
			at = uint64(t.UnixNano())
		}
		recs[i] = &logspb.LogRecord{
			TimeUnixNano: at, ObservedTimeUnixNano: now,
			SeverityNumber: sev, SeverityText: text, EventName: "mcpseal.audit",
			Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: string(l.Raw)}},
			Attributes: []*commonpb.KeyValue{
				{Key: "mcpseal.audit.seq", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: l.Seq}}},
				{Key: "mcpseal.audit.prev", Value: referenceString(l.Prev)},
				{Key: "mcpseal.audit.hash", Value: referenceString(l.Hash)},
				{Key: "mcpseal.audit.sink", Value: referenceString(name)},
			},
		}
	}
	rl := &logspb.ResourceLogs{
		Resource:  &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "service.name", Value: referenceString("mcpseal")}}},
		ScopeLogs: []*logspb.ScopeLogs{{Scope: &commonpb.InstrumentationScope{Name: "mcpseal.audit"}, LogRecords: recs}},
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(rl)
}

func referenceString(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

func assertLogsAsProtoMarshal(t *testing.T, name string, lines []audit.Line, now uint64) {
	t.Helper()
	want, werr := referenceResourceLogs(name, lines, now)
	got, err := appendResourceLogs([]byte("kept"), name, lines, now)
	if (err != nil) != (werr != nil) {
		t.Fatalf("error %v, proto.Marshal %v", err, werr)
	}
	if err != nil {
		return
	}
	if !bytes.HasPrefix(got, []byte("kept")) {
		t.Fatal("the encoder did not append")
	}
	if got = got[4:]; !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%x\nproto.Marshal\n%x", got, want)
	}
}

// TestLogsEncodingIsProtoMarshals: audit lines of both severities, with
// and without a time, a batch whose length needs a multi-byte varint,
// and none, encode to proto.Marshal's bytes.
func TestLogsEncodingIsProtoMarshals(t *testing.T) {
	t.Parallel()
	lines := []audit.Line{
		{Seq: 1, Prev: "", Hash: "sha256:aa", Raw: []byte(`{"v":1,"time":"2026-12-01T17:00:00.123Z","kind":"call","decision":"allow"}`)},
		{Seq: 2, Prev: "sha256:aa", Hash: "sha256:bb", Raw: []byte(`{"v":1,"kind":"drift","decision":"block"}`)},
		{Seq: 0, Raw: nil},
		{Seq: -1, Raw: bytes.Repeat([]byte("x"), 20000)},
	}
	assertLogsAsProtoMarshal(t, "otel", lines, 1764608400000000000)
	assertLogsAsProtoMarshal(t, "", lines[:1], 0)
	assertLogsAsProtoMarshal(t, "otel", nil, 1)
	if _, err := appendResourceLogs(nil, "otel", []audit.Line{{Raw: []byte("\xff")}}, 1); err == nil {
		t.Fatal("a body that is not UTF-8 encoded")
	}
}

// FuzzLogsEncoding: any line, sink name and position encode to
// proto.Marshal's bytes, or fail where it fails.
func FuzzLogsEncoding(f *testing.F) {
	f.Add("otel", int64(7), "sha256:aa", "sha256:bb", []byte(`{"time":"2026-12-01T17:00:00Z","decision":"block"}`), uint64(5))
	f.Add("", int64(0), "", "", []byte{}, uint64(0))
	f.Add("\xff", int64(-1), "\x00", "h", []byte("\xc3"), uint64(1<<63))
	f.Fuzz(func(t *testing.T, name string, seq int64, prev, hash string, raw []byte, now uint64) {
		lines := []audit.Line{{Seq: seq, Prev: prev, Hash: hash, Raw: raw}, {Seq: seq + 1, Prev: hash, Hash: prev, Raw: raw}}
		assertLogsAsProtoMarshal(t, name, lines, now)
		if utf8.ValidString(name) && utf8.ValidString(prev) && utf8.ValidString(hash) && utf8.Valid(raw) {
			if _, err := appendResourceLogs(nil, name, lines, now); err != nil {
				t.Fatal(err)
			}
		}
	})
}
