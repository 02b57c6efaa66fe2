package siem

import (
	"bytes"
	"testing"
)

// otlpLine wraps records (raw JSON log records) in one export.
func rt16bOTLP(records ...string) string {
	s := `{"resourceLogs":[{"scopeLogs":[{"logRecords":[`
	for i, r := range records {
		if i > 0 {
			s += ","
		}
		s += r
	}
	return s + `]}]}]}`
}

func rt16bVerifies(t *testing.T, home, copyText string) bool {
	t.Helper()
	return copyVerifies(t, home, []byte(copyText+"\n"))
}

// TestAttackOTLPProtoFieldNameAlias: OTLP JSON readers (the collector's
// pdata, protojson-style hand readers in Python/JS/C#/Rust) accept the
// proto field names (string_value, log_records, scope_logs,
// resource_logs) besides the lowerCamelCase ones, and pdata takes the
// last member of a oneof. otlpBodies reads only the camelCase name, and
// LookupStrict's case-fold check does not relate "string_value" to
// "stringValue". So record 2's body can say one thing to mcpseal and
// another to the SIEM, and extra records only the SIEM sees can be added.
func TestAttackOTLPProtoFieldNameAlias(t *testing.T) {
	home, _ := newLog(t, 3)
	ls := rt16Lines(t, home, 3)
	fake := bytes.Replace(ls[1].Raw, []byte(`"outcome":"allowed"`), []byte(`"outcome":"refused"`), 1)
	if bytes.Equal(fake, ls[1].Raw) {
		t.Fatal("setup")
	}
	r := func(raw []byte) string { return `{"body":{"stringValue":` + jsonString(t, raw) + `}}` }
	for _, c := range []struct{ name, line string }{
		{"string_value after stringValue (pdata: last wins)",
			rt16bOTLP(r(ls[0].Raw), `{"body":{"stringValue":`+jsonString(t, ls[1].Raw)+`,"string_value":`+jsonString(t, fake)+`}}`, r(ls[2].Raw))},
		{"kvlistValue after stringValue (oneof, pdata: last wins)",
			rt16bOTLP(r(ls[0].Raw), `{"body":{"stringValue":`+jsonString(t, ls[1].Raw)+`,"kvlistValue":{"values":[{"key":"outcome","value":{"stringValue":"refused"}}]}}}`, r(ls[2].Raw))},
		{"extra log_records beside logRecords",
			`{"resourceLogs":[{"scopeLogs":[{"logRecords":[` + r(ls[0].Raw) + `,` + r(ls[1].Raw) + `,` + r(ls[2].Raw) + `],"log_records":[` + r(fake) + `]}]}]}`},
		{"extra resource_logs beside resourceLogs",
			`{"resourceLogs":[{"scopeLogs":[{"logRecords":[` + r(ls[0].Raw) + `,` + r(ls[1].Raw) + `,` + r(ls[2].Raw) + `]}]}],"resource_logs":[{"scope_logs":[{"log_records":[` + r(fake) + `]}]}]}`},
	} {
		if rt16bVerifies(t, home, c.line) {
			t.Errorf("%s: a copy whose record 2 reads as %q to pdata-style readers verifies", c.name, "outcome refused")
		}
	}
}

// TestAttackOTLPAttributesUnchecked: the exporter sends severity and the
// chain position as record attributes (mcpseal.audit.seq/prev/hash) and
// severityNumber/Text; SIEM rules key on them, as on syslog's PRI and SD,
// which checkSyslogHeader now checks. A copy whose record for a refusal
// says INFO and seq 77 verifies.
func TestAttackOTLPAttributesUnchecked(t *testing.T) {
	home, _ := newLog(t, 1) // event 1 is a refusal
	ls := rt16Lines(t, home, 1)
	rec := `{"severityNumber":9,"severityText":"INFO","body":{"stringValue":` + jsonString(t, ls[0].Raw) + `},` +
		`"attributes":[{"key":"mcpseal.audit.seq","value":{"intValue":"77"}},{"key":"mcpseal.audit.hash","value":{"stringValue":"00"}}]}`
	if rt16bVerifies(t, home, rt16bOTLP(rec)) {
		t.Errorf("an OTLP record for a refusal stored as INFO with seq 77 and a wrong hash attribute verifies")
	}
}
