package siem

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// A receiver's copy, as `mcpseal audit verify --stream FILE` reads it, is
// text with one record a line, in the order received, in any of the forms
// mcpseal sends:
//
//   - an audit line as chained ({"v":1,"seq":...});
//   - a webhook batch body ({"v":1,"type":"mcpseal-audit-batch",...}):
//     its events;
//   - a syslog message as a receiver stores it: the audit line is its
//     message, after the structured data;
//   - an OTLP logs export in the OTLP JSON encoding, as the OpenTelemetry
//     Collector's file exporter writes it ({"resourceLogs":...}): the
//     string body of each log record.
//
// Blank lines are skipped; anything else is an error naming the line.
// The copy is the receiver's and may be anyone's: nothing of it is echoed.

// maxCopyLine bounds one line of a copy: a whole webhook batch (256
// events of at most 8 KiB, and its envelope).
const maxCopyLine = 256*8<<10 + 4096

var (
	otlpPrefix  = []byte(`{"resourceLogs":`)
	batchPrefix = []byte(`{"v":1,"type":"` + BatchType + `"`)
	eventPrefix = []byte(`{"v":1,"seq":`)
)

// ParseCopy returns the audit lines of a receiver's copy, in order.
func ParseCopy(data []byte) ([][]byte, error) {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxCopyLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if bytes.HasPrefix(line, otlpPrefix) {
			evs, err := otlpBodies(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			out = append(out, evs...)
			continue
		}
		if bytes.HasPrefix(line, batchPrefix) {
			evs, err := batchEvents(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			out = append(out, evs...)
			continue
		}
		i := bytes.Index(line, eventPrefix)
		if i < 0 {
			return nil, fmt.Errorf("line %d: not an audit event, a batch or a syslog message carrying one", n)
		}
		out = append(out, bytes.Clone(line[i:]))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	return out, nil
}

func batchEvents(line []byte) ([][]byte, error) {
	ms, err := jsonrpc.Members(line)
	if err != nil {
		return nil, errors.New("a batch that is not one unambiguous JSON object")
	}
	for _, m := range ms {
		if m.Key != "events" {
			continue
		}
		if len(m.Value) == 0 || m.Value[0] != '[' {
			return nil, errors.New("a batch whose events is not an array")
		}
		els, err := jsonrpc.Elements(m.Value)
		if err != nil {
			return nil, errors.New("a batch whose events do not parse")
		}
		out := make([][]byte, len(els))
		for i, e := range els {
			out[i] = bytes.Clone(e)
		}
		return out, nil
	}
	return nil, errors.New("a batch without events")
}

// otlpBodies returns the string bodies of the log records of one OTLP
// JSON logs export, in order.
func otlpBodies(line []byte) ([][]byte, error) {
	var doc struct {
		ResourceLogs []struct {
			ScopeLogs []struct {
				LogRecords []struct {
					Body struct {
						StringValue *string `json:"stringValue"`
					} `json:"body"`
				} `json:"logRecords"`
			} `json:"scopeLogs"`
		} `json:"resourceLogs"`
	}
	if err := json.Unmarshal(line, &doc); err != nil {
		return nil, errors.New("an OTLP logs export that does not parse")
	}
	var out [][]byte
	for _, rl := range doc.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for _, r := range sl.LogRecords {
				if r.Body.StringValue == nil {
					return nil, errors.New("an OTLP log record without a string body")
				}
				out = append(out, []byte(*r.Body.StringValue))
			}
		}
	}
	return out, nil
}
