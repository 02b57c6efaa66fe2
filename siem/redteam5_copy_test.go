package siem

import (
	"fmt"
	"strings"
	"testing"
)

// TestAttackSyslogOverlongZeroPaddedPRI: priEnd stops looking for '>'
// after 11 bytes, so a PRI of 11+ digits is no PRI to the check (neither
// compared nor a header). rsyslog's ParsePRI (and syslog-ng) read digits
// while the value stays <= 191: "<00000000134>" is local0.info. A refused
// event (notice, 133) stored as info verifies.
func TestAttackSyslogOverlongZeroPaddedPRI(t *testing.T) {
	home, _ := newLog(t, 1)
	ls := rt16Lines(t, home, 1)
	if severity(ls[0]) != sevNotice {
		t.Fatal("setup")
	}
	for _, prefix := range []string{
		"<00000000134>Dec  2 16:54:59 host mcpseal[1]: ",
		"<0000000000000000000000131>Dec  2 16:54:59 host mcpseal: ",
	} {
		if rt16bVerifies(t, home, prefix+string(ls[0].Raw)) {
			t.Errorf("verifies with another severity: %q", prefix)
		}
	}
}

// TestAttackSyslogSpaceTerminatedTagBeforeMcpseal: the tag rule refuses a
// second ": " but an RFC 3164 tag also ends at a space (rsyslog pmrfc3164
// reads TAG up to ':' or ' '; syslog-ng's program name likewise). After
// the timestamp and host, "evilapp" is the tag, the message
// "mcpseal[1]: {...}" (not JSON). Same before an RFC 5424 header.
func TestAttackSyslogSpaceTerminatedTagBeforeMcpseal(t *testing.T) {
	home, _ := newLog(t, 1)
	ls := rt16Lines(t, home, 1)
	l := ls[0]
	for _, prefix := range []string{
		"<133>Dec  2 16:54:59 host evilapp mcpseal[1]: ",
		"<133>Dec  2 16:54:59 host evilapp[9] mcpseal: ",
		"<133>Dec  2 16:54:59 host local0.err mcpseal: ",
		"<133>Dec  2 16:54:59 host evilapp[9] <133>1 - h mcpseal 1 " + printUS(lineMember(l.Raw, "op"), 32) + " " + rt16dSD(l.Seq, l.Prev, l.Hash) + " ",
	} {
		if rt16bVerifies(t, home, prefix+string(l.Raw)) {
			t.Errorf("verifies with another app: %q", prefix)
		}
	}
	_ = strings.Contains
}

// TestAttackOTLPResourceAttributeNormalisedCollision: appIs refuses only
// resource/scope keys starting "mcpseal.audit" and reads only
// "service.name". Receivers that normalise attribute names to labels
// (Loki's OTLP ingest: '.' -> '_', service.name -> service_name; the
// Prometheus translation) see "service_name" and "mcpseal_audit_seq"
// beside the record's own, which collide after normalisation.
func TestAttackOTLPResourceAttributeNormalisedCollision(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	rec := `{"severityNumber":13,"severityText":"WARN","body":{"stringValue":` + jsonString(t, l.Raw) + `},"attributes":[` +
		fmt.Sprintf(`{"key":"mcpseal.audit.seq","value":{"intValue":"%d"}},{"key":"mcpseal.audit.prev","value":{"stringValue":%q}},{"key":"mcpseal.audit.hash","value":{"stringValue":%q}}]}`, l.Seq, l.Prev, l.Hash)
	for _, extra := range []string{
		`{"key":"service_name","value":{"stringValue":"evilapp"}}`,
		`{"key":"mcpseal_audit_seq","value":{"intValue":"999"}}`,
		`{"key":"MCPSEAL.AUDIT.SEQ","value":{"intValue":"999"}}`,
	} {
		line := `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"mcpseal"}},` + extra + `]},"scopeLogs":[{"scope":{"name":"mcpseal.audit"},"logRecords":[` + rec + `]}]}]}`
		if copyVerifies(t, home, []byte(line+"\n")) {
			t.Errorf("verifies with resource attribute %s", extra)
		}
	}
}
