package siem

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/mcpseal/mcpseal/audit"
)

// TestAttackSyslogHeaderBehindAnyLeadingByte: checkSyslogHeader parses
// the RFC 5424 header only when the prefix starts with '<' (after one BOM
// or an octet count). Any other leading byte - a receiver's own timestamp
// and host (a relay file that prepends them to the raw message), a space,
// a tab, two BOMs - puts the line in the "traditional" branch, which
// only checks that mcpseal's SD element is present: a refusal lowered to
// local0.info with MSGID "list" verifies, and grok (unanchored
// SYSLOG5424LINE) / regex parsers still read PRI 134 and MSGID list.
func TestAttackSyslogHeaderBehindAnyLeadingByte(t *testing.T) {
	home, _ := newLog(t, 1) // a refusal: <133>1 ... call
	ls := rt16Lines(t, home, 1)
	s := &syslog{host: "gate-1", pid: "4242"}
	m := s.message(ls[0])
	f := bytes.SplitN(m, []byte(" "), 7)
	lowered := "<134>1 " + string(f[1]) + " " + string(f[2]) + " " + string(f[3]) + " " + string(f[4]) + " list " + string(f[6])
	for _, c := range []struct{ name, line string }{
		{"receiver timestamp and host", "2026-12-02T16:00:00Z 10.0.0.5 " + lowered},
		{"leading space", " " + lowered},
		{"leading tab", "\t" + lowered},
		{"two BOMs", "\ufeff\ufeff" + lowered},
		{"octet count, two spaces", "999  " + lowered},
	} {
		if rt16bVerifies(t, home, c.line) {
			t.Errorf("%s: a refusal stored as <134>1 ... list verifies", c.name)
		}
	}
}

// TestAttackSyslogTraditionalInsertedText: in the traditional branch any
// text may stand between the syslog tag and the event; the SIEM's message
// field is all of it (Splunk's auto key=value extraction reads
// severity=info op=list from it). The 5424 branch refuses the same insert.
func TestAttackSyslogTraditionalInsertedText(t *testing.T) {
	home, _ := newLog(t, 1)
	ls := rt16Lines(t, home, 1)
	line := "Dec  2 16:00:00 gate-1 mcpseal[4242]: severity=info op=list outcome=allowed NOTE: false positive, ignore " + string(ls[0].Raw)
	if rt16bVerifies(t, home, line) {
		t.Errorf("a traditional line with text inserted before a refusal's event verifies")
	}
}

// TestAttackSyslogAppNameUnchecked: APP-NAME is always "mcpseal" as sent,
// and docs name only timestamp, host and procid as the receiver's; a
// copy whose APP-NAME is rewritten (SIEM rules on app=mcpseal miss it)
// verifies.
func TestAttackSyslogAppNameUnchecked(t *testing.T) {
	home, _ := newLog(t, 1)
	ls := rt16Lines(t, home, 1)
	s := &syslog{host: "gate-1", pid: "4242"}
	m := string(s.message(ls[0]))
	line := strings.Replace(m, " mcpseal 4242 ", " cron 4242 ", 1)
	if line == m {
		t.Fatal("setup")
	}
	if rt16bVerifies(t, home, line) {
		t.Errorf("a message whose APP-NAME is rewritten to cron verifies")
	}
}

// TestAttackOTLPSeverityOmitted: proto3 JSON omits a zero enum, so a
// record without severityNumber IS severityNumber 0 (UNSPECIFIED) to every
// reader. An explicit 0 is refused, the omitted one verifies: a refusal's
// record stripped of severityNumber and severityText shows as
// UNSPECIFIED, below any WARN alert.
func TestAttackOTLPSeverityOmitted(t *testing.T) {
	home, _ := newLog(t, 1) // a refusal: WARN
	ls := rt16Lines(t, home, 1)
	body := `"body":{"stringValue":` + jsonString(t, ls[0].Raw) + `}`
	explicit := rt16bOTLP(`{"severityNumber":0,` + body + `}`)
	omitted := rt16bOTLP(`{` + body + `}`)
	if rt16bVerifies(t, home, explicit) {
		t.Fatal("setup: explicit severityNumber 0 verifies")
	}
	if rt16bVerifies(t, home, omitted) {
		t.Errorf("a refusal's record with severity omitted (= UNSPECIFIED) verifies while the explicit 0 is refused")
	}
}

// TestAttackOTLPPositionOutsideRecordAttributes: only the record's
// attributes array is checked, by exact key. Receivers flatten other
// spellings into the same field: Splunk's HEC exporter and Elastic join a
// kvlist's keys with '.', so {"mcpseal.audit": {"seq": 77}} is field
// mcpseal.audit.seq, and they merge resource (and scope) attributes into
// the event's fields. A refusal whose seq/hash show as 77/00 verifies.
func TestAttackOTLPPositionOutsideRecordAttributes(t *testing.T) {
	home, _ := newLog(t, 1)
	ls := rt16Lines(t, home, 1)
	body := `"body":{"stringValue":` + jsonString(t, ls[0].Raw) + `}`
	fakeKV := `{"key":"mcpseal.audit.seq","value":{"intValue":"77"}},{"key":"mcpseal.audit.hash","value":{"stringValue":"00"}}`
	nested := `{"key":"mcpseal.audit","value":{"kvlistValue":{"values":[{"key":"seq","value":{"intValue":"77"}},{"key":"hash","value":{"stringValue":"00"}}]}}}`
	for _, c := range []struct{ name, line string }{
		{"kvlist mcpseal.audit after the real attributes",
			rt16bOTLP(`{` + body + `,"attributes":[{"key":"mcpseal.audit.seq","value":{"intValue":"1"}},` + nested + `]}`)},
		{"resource attributes, record's dropped",
			`{"resourceLogs":[{"resource":{"attributes":[` + fakeKV + `]},"scopeLogs":[{"logRecords":[{` + body + `}]}]}]}`},
		{"scope attributes, record's dropped",
			`{"resourceLogs":[{"scopeLogs":[{"scope":{"name":"mcpseal.audit","attributes":[` + fakeKV + `]},"logRecords":[{` + body + `}]}]}]}`},
	} {
		if rt16bVerifies(t, home, c.line) {
			t.Errorf("%s: a record whose position reads as seq 77 / hash 00 to a flattening receiver verifies", c.name)
		}
	}
}

// TestAttackOTLPLegacyContainerName: OTLP JSON before 0.19 named
// scopeLogs "instrumentationLibraryLogs" (and logRecords "logs"); readers
// still take it when scopeLogs is absent. otlpBodies skips unknown
// members, so records only the SIEM sees - a fabricated event - ride
// along with a faithful copy.
func TestAttackOTLPLegacyContainerName(t *testing.T) {
	home, _ := newLog(t, 1)
	ls := rt16Lines(t, home, 1)
	rec := `{"body":{"stringValue":` + jsonString(t, ls[0].Raw) + `}}`
	fake := `{"severityNumber":9,"body":{"stringValue":` + jsonString(t, []byte(`{"v":1,"seq":2,"op":"call","outcome":"allowed","note":"fabricated"}`)) + `}}`
	line := `{"resourceLogs":[{"scopeLogs":[{"logRecords":[` + rec + `]}]},{"instrumentationLibraryLogs":[{"logRecords":[` + fake + `]}]}]}`
	if rt16bVerifies(t, home, line) {
		t.Errorf("a copy carrying a record under instrumentationLibraryLogs (invisible to the check) verifies")
	}
}

// faithfulExport is what mcpseal sent for lines, as protojson writes it.
func faithfulExport(t *testing.T, lines []audit.Line) *collogspb.ExportLogsServiceRequest {
	t.Helper()
	b, err := appendResourceLogs(nil, "otel", lines, 1764691200000000000)
	if err != nil {
		t.Fatal(err)
	}
	rl := &logspb.ResourceLogs{}
	if err := proto.Unmarshal(b, rl); err != nil {
		t.Fatal(err)
	}
	return &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{rl}}
}

// TestOTLPCopyInProtoNamesIsRefused (third red team, issue 16): a
// receiver that writes OTLP JSON with the proto field names (Go protojson
// UseProtoNames, Python's preserving_proto_field_name) is not writing
// OTLP's JSON encoding, which names fields in lowerCamelCase; the copy is
// refused whole, not read in part (a copy mixing both spellings could
// show a SIEM records the check never read). The camelCase export of the
// same records verifies, with a space after a colon as Python writes it.
func TestOTLPCopyInProtoNamesIsRefused(t *testing.T) {
	home, _ := newLog(t, 3)
	ls := rt16Lines(t, home, 3)
	req := faithfulExport(t, ls)
	j, _ := protojson.Marshal(req)
	if !rt16bVerifies(t, home, strings.Replace(string(j), `{"resourceLogs":`, `{"resourceLogs": `, 1)) {
		t.Fatal("the camelCase export does not verify")
	}
	pn, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if rt16bVerifies(t, home, string(pn)) {
		t.Errorf("an OTLP copy in proto field names verifies: %.40q", pn)
	}
}

// TestFaithfulOTLPCopyCollectorBatchedVerifies: the Collector's batch
// processor (in most pipelines; send_batch_size 8192) merges exports, and
// the file exporter writes each merged request as one line: 4,096 of
// mcpseal's records are about 3.5 MB, over the 2 MiB line bound this test
// was written against (maxCopyLine is now 16 MiB).
func TestFaithfulOTLPCopyCollectorBatchedVerifies(t *testing.T) {
	const n = 4096
	home, _ := newLog(t, n)
	ls := rt16Lines(t, home, n)
	req := &collogspb.ExportLogsServiceRequest{}
	for i := 0; i < n; i += maxBatch {
		req.ResourceLogs = append(req.ResourceLogs, faithfulExport(t, ls[i:min(i+maxBatch, n)]).ResourceLogs...)
	}
	j, err := protojson.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := ParseCopy(append(j, '\n'))
	if err != nil {
		t.Fatalf("a faithful collector-batched export of %d records (%d bytes, one line) is refused: %v", n, len(j), err)
	}
	rep, err := audit.CheckStream(home, evs)
	if err != nil || !rep.OK() {
		t.Fatal(rep, err)
	}
}

var _ = fmt.Sprint

// TestHostileCopyLinesBounded: lines of a quarter of maxCopyLine built to
// hit each parser's inner loops; each must be read at 1 MiB/s or more
// (linear: a quadratic loop over 4 MiB takes hours), under -race too.
func TestHostileCopyLinesBounded(t *testing.T) {
	t.Parallel()
	home, _ := newLog(t, 1)
	ls := rt16Lines(t, home, 1)
	ev := string(ls[0].Raw)
	n := maxCopyLine/4 - 2*len(ev) - 1000
	kv := `{"key":"k","value":{"stringValue":"x"}},`
	rec := `{"body":{"stringValue":` + jsonString(t, ls[0].Raw) + `},"attributes":[` + strings.Repeat(kv, n/len(kv)/2) + `{"key":"z","value":{}}]}`
	for _, c := range []struct{ name, line string }{
		{"many SD elements", "<133>1 - h mcpseal 1 call " + strings.Repeat(`[a b="\]\""]`, n/12) + " " + ev},
		{"unterminated quoted SD", "<133>1 - h mcpseal 1 call [a b=\"" + strings.Repeat(`\\`, n/2) + " " + ev},
		{"many sdID in traditional prefix", strings.Repeat(sdID, n/len(sdID)) + " " + ev},
		{"many attributes", rt16bOTLP(rec)},
		{"many empty records", rt16bOTLP(strings.Repeat(`{"body":{"stringValue":""}},`, n/29) + `{}`)},
		{"many members in a record", rt16bOTLP(`{` + strings.Repeat(`"a":1,`, n/6/2) + `"body":{"stringValue":""}}`)},
	} {
		start := time.Now()
		_, err := ParseCopy([]byte(c.line + "\n"))
		d := time.Since(start)
		t.Logf("%s: len %d, %v, err %v", c.name, len(c.line), d, err)
		if d > time.Duration(len(c.line))*time.Second/(1<<20) {
			t.Errorf("%s: %d bytes took %v", c.name, len(c.line), d)
		}
	}
}

// TestFaithfulSyslogForwardFormatWithPRIVerifies: a relay forwarding in
// rsyslog's RSYSLOG_ForwardFormat / TraditionalForwardFormat writes
// "<PRI>TIMESTAMP HOST TAG: MSG" (no version, SD dropped); a receiver
// that stores the frame as received keeps the PRI. The PRI is the
// event's: the faithful line verifies (third red team, issue 16: it was
// refused, any prefix starting '<' had to be a full RFC 5424 header).
func TestFaithfulSyslogForwardFormatWithPRIVerifies(t *testing.T) {
	home, _ := newLog(t, 1) // a refusal: PRI 133
	ls := rt16Lines(t, home, 1)
	for _, line := range []string{
		"<133>2026-12-02T16:00:00+00:00 gate-1 mcpseal[4242]: " + string(ls[0].Raw),
		"<133>Dec  2 16:00:00 gate-1 mcpseal[4242]: " + string(ls[0].Raw),
	} {
		if !rt16bVerifies(t, home, line) {
			t.Errorf("a faithful forwarded line with the event's own PRI is refused: %.50q", line)
		}
	}
}
