package siem

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/internal/otlp"
)

// OTLP logs: one log record per audit event, in chain order. The body is
// the event line exactly as chained (a string); the attributes carry its
// position: mcpseal.audit.seq, mcpseal.audit.prev, mcpseal.audit.hash. A
// batch is acknowledged by a successful export whose answer rejects no
// record (a partial success is a failure: the batch is sent again).

const logsService = "opentelemetry.proto.collector.logs.v1.LogsService"

type otlpLogs struct {
	name string
	c    *otlp.Client
}

func newOTLPLogs(c SinkConfig) (*otlpLogs, error) {
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		return nil, err
	}
	if c.Protocol != "grpc" && (u.Path == "" || u.Path == "/") {
		u.Path = "/v1/logs"
	}
	var roots *x509.CertPool
	if c.CAFile != "" {
		pem, err := atomicfile.ReadFileFollow(c.CAFile, maxCAFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, errors.New("ca_file holds no certificate")
		}
	}
	return &otlpLogs{name: c.Name, c: otlp.New(u, c.Protocol == "grpc", logsService, http.Header{}, roots, sendTimeout)}, nil
}

func (o *otlpLogs) send(ctx context.Context, lines []audit.Line) error {
	now := uint64(time.Now().UnixNano())
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
				{Key: "mcpseal.audit.prev", Value: strValue(l.Prev)},
				{Key: "mcpseal.audit.hash", Value: strValue(l.Hash)},
				{Key: "mcpseal.audit.sink", Value: strValue(o.name)},
			},
		}
	}
	rl := &logspb.ResourceLogs{
		Resource:  &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "service.name", Value: strValue("mcpseal")}}},
		ScopeLogs: []*logspb.ScopeLogs{{Scope: &commonpb.InstrumentationScope{Name: "mcpseal.audit"}, LogRecords: recs}},
	}
	b, err := proto.Marshal(rl)
	if err != nil {
		return err
	}
	answer, err := o.c.Export(ctx, otlp.Repeated([][]byte{b}))
	if err != nil {
		return err
	}
	if n := rejected(answer); n != 0 {
		return fmt.Errorf("otlp logs: the collector rejected %d records", n)
	}
	return nil
}

func strValue(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

// rejected reads ExportLogsServiceResponse.partial_success (field 1)
// .rejected_log_records (field 1); -1 when the answer does not parse.
func rejected(answer []byte) int64 {
	var n int64
	for len(answer) > 0 {
		num, typ, l := protowire.ConsumeTag(answer)
		if l < 0 {
			return -1
		}
		answer = answer[l:]
		if num == 1 && typ == protowire.BytesType {
			ps, l := protowire.ConsumeBytes(answer)
			if l < 0 {
				return -1
			}
			answer = answer[l:]
			for len(ps) > 0 {
				num, typ, l := protowire.ConsumeTag(ps)
				if l < 0 {
					return -1
				}
				ps = ps[l:]
				if num == 1 && typ == protowire.VarintType {
					v, l := protowire.ConsumeVarint(ps)
					if l < 0 {
						return -1
					}
					n, ps = int64(v), ps[l:]
					continue
				}
				l = protowire.ConsumeFieldValue(num, typ, ps)
				if l < 0 {
					return -1
				}
				ps = ps[l:]
			}
			continue
		}
		l = protowire.ConsumeFieldValue(num, typ, answer)
		if l < 0 {
			return -1
		}
		answer = answer[l:]
	}
	return n
}

func (o *otlpLogs) close() { o.c.Close() }

// resendOnReconnect: an export's answer acknowledges its batch.
func (o *otlpLogs) resendOnReconnect() int64 { return 0 }
