package siem

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/internal/pbwire"

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
	b, err := appendResourceLogs(nil, o.name, lines, uint64(time.Now().UnixNano()))
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

// The OTLP logs message (opentelemetry/proto/logs/v1) is encoded by hand,
// byte for byte what proto.Marshal writes for it (TestLogsEncodingIsProtoMarshals,
// FuzzLogsEncoding): fields in number order but a oneof's member last,
// proto3 scalars left out when zero, a oneof's member written even when
// zero. The mcpseal binary then links neither the protobuf runtime nor
// the OTLP message types, whose initialisers ran at every start
// (docs/performance.md, issue 12).

// Field numbers of opentelemetry/proto/{common,resource,logs}/v1.
const (
	fieldResourceLogsResource  = 1
	fieldResourceLogsScopeLogs = 2
	fieldResourceAttributes    = 1
	fieldScopeLogsScope        = 1
	fieldScopeLogsRecords      = 2
	fieldScopeName             = 1
	fieldKeyValueKey           = 1
	fieldKeyValueValue         = 2
	fieldAnyValueString        = 1
	fieldAnyValueInt           = 3

	fieldRecordTime         = 1
	fieldRecordSeverity     = 2
	fieldRecordSeverityText = 3
	fieldRecordBody         = 5
	fieldRecordAttributes   = 6
	fieldRecordObserved     = 11
	fieldRecordEventName    = 12

	severityInfo = 9  // SEVERITY_NUMBER_INFO
	severityWarn = 13 // SEVERITY_NUMBER_WARN
)

// errNotUTF8 is proto.Marshal's refusal of a proto3 string that is not
// UTF-8: the batch is not sent (and is retried, as any failed send).
var errNotUTF8 = errors.New("otlp logs: a string is not valid UTF-8")

// appendResourceLogs appends the ResourceLogs of lines, one record each,
// observed at now, to b.
func appendResourceLogs(b []byte, sink string, lines []audit.Line, now uint64) ([]byte, error) {
	e := logsEncoder{b: b}
	r := e.begin(fieldResourceLogsResource)
	e.keyValue(fieldResourceAttributes, "service.name", func() { e.oneofStr(fieldAnyValueString, "mcpseal") })
	e.end(r)
	sl := e.begin(fieldResourceLogsScopeLogs)
	sc := e.begin(fieldScopeLogsScope)
	e.str(fieldScopeName, "mcpseal.audit")
	e.end(sc)
	for _, l := range lines {
		sev, text := uint64(severityInfo), "INFO"
		if severity(l) == sevNotice {
			sev, text = severityWarn, "WARN"
		}
		var at uint64
		if t, err := time.Parse(time.RFC3339Nano, lineMember(l.Raw, "time")); err == nil && t.UnixNano() > 0 {
			at = uint64(t.UnixNano())
		}
		rec := e.begin(fieldScopeLogsRecords)
		e.fixed64(fieldRecordTime, at)
		e.b = pbwire.AppendTag(e.b, fieldRecordSeverity, pbwire.VarintType)
		e.b = pbwire.AppendVarint(e.b, sev)
		e.str(fieldRecordSeverityText, text)
		body := e.begin(fieldRecordBody)
		e.bad = e.bad || !utf8.Valid(l.Raw)
		e.b = pbwire.AppendTag(e.b, fieldAnyValueString, pbwire.BytesType)
		e.b = pbwire.AppendBytes(e.b, l.Raw)
		e.end(body)
		e.keyValue(fieldRecordAttributes, "mcpseal.audit.seq", func() {
			e.b = pbwire.AppendTag(e.b, fieldAnyValueInt, pbwire.VarintType)
			e.b = pbwire.AppendVarint(e.b, uint64(l.Seq))
		})
		e.keyValue(fieldRecordAttributes, "mcpseal.audit.prev", func() { e.oneofStr(fieldAnyValueString, l.Prev) })
		e.keyValue(fieldRecordAttributes, "mcpseal.audit.hash", func() { e.oneofStr(fieldAnyValueString, l.Hash) })
		e.keyValue(fieldRecordAttributes, "mcpseal.audit.sink", func() { e.oneofStr(fieldAnyValueString, sink) })
		e.fixed64(fieldRecordObserved, now)
		e.str(fieldRecordEventName, "mcpseal.audit")
		e.end(rec)
	}
	e.end(sl)
	if e.bad {
		return nil, errNotUTF8
	}
	return e.b, nil
}

// logsEncoder appends one message; bad records a string that is not
// UTF-8.
type logsEncoder struct {
	b   []byte
	bad bool
}

// begin and end: an embedded message of field num (pbwire.BeginMessage).
func (e *logsEncoder) begin(num pbwire.Number) int { return pbwire.BeginMessage(&e.b, num) }

func (e *logsEncoder) end(at int) { pbwire.EndMessage(&e.b, at) }

// str appends a proto3 string, left out when empty.
func (e *logsEncoder) str(num pbwire.Number, s string) {
	if s != "" {
		e.oneofStr(num, s)
	}
}

// oneofStr appends a string even when empty.
func (e *logsEncoder) oneofStr(num pbwire.Number, s string) {
	e.bad = e.bad || !utf8.ValidString(s)
	e.b = pbwire.AppendTag(e.b, num, pbwire.BytesType)
	e.b = pbwire.AppendString(e.b, s)
}

func (e *logsEncoder) fixed64(num pbwire.Number, v uint64) {
	if v != 0 {
		e.b = pbwire.AppendTag(e.b, num, pbwire.Fixed64Type)
		e.b = pbwire.AppendFixed64(e.b, v)
	}
}

// keyValue appends a KeyValue whose AnyValue's member value appends.
func (e *logsEncoder) keyValue(num pbwire.Number, k string, value func()) {
	m := e.begin(num)
	e.str(fieldKeyValueKey, k)
	v := e.begin(fieldKeyValueValue)
	value()
	e.end(v)
	e.end(m)
}

// rejected reads ExportLogsServiceResponse.partial_success (field 1)
// .rejected_log_records (field 1); -1 when the answer does not parse.
func rejected(answer []byte) int64 {
	var n int64
	for len(answer) > 0 {
		num, typ, l := pbwire.ConsumeTag(answer)
		if l < 0 {
			return -1
		}
		answer = answer[l:]
		if num == 1 && typ == pbwire.BytesType {
			ps, l := pbwire.ConsumeBytes(answer)
			if l < 0 {
				return -1
			}
			answer = answer[l:]
			for len(ps) > 0 {
				num, typ, l := pbwire.ConsumeTag(ps)
				if l < 0 {
					return -1
				}
				ps = ps[l:]
				if num == 1 && typ == pbwire.VarintType {
					v, l := pbwire.ConsumeVarint(ps)
					if l < 0 {
						return -1
					}
					n, ps = int64(v), ps[l:]
					continue
				}
				l = pbwire.ConsumeFieldValue(num, typ, ps)
				if l < 0 {
					return -1
				}
				ps = ps[l:]
			}
			continue
		}
		l = pbwire.ConsumeFieldValue(num, typ, answer)
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
