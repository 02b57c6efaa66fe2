package siem

import (
	"testing"
)

// TestAttackSyslogHostFieldIsTag: receiverPrefix takes any 2nd/4th field
// as "the host", unread. rsyslog pmrfc3164 and syslog-ng accept a
// hostname only if followed by a space (a token ending ':' or holding '['
// is the TAG/program), grok SYSLOGHOST won't match "evilapp:" either.
// Each of these shows app "evilapp", message "mcpseal: {...}" (not JSON).
func TestAttackSyslogHostFieldIsTag(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	hdr := "<133>1 - h mcpseal 1 " + printUS(lineMember(l.Raw, "op"), 32) + " " + rt16dSD(l.Seq, l.Prev, l.Hash) + " "
	for _, prefix := range []string{
		"<133>Dec  2 16:54:59 evilapp: mcpseal: ",
		"<133>Dec  2 16:54:59 evilapp[9]: mcpseal[1]: ",
		"2026-12-02T16:54:59Z evilapp: mcpseal: ",
		"Dec  2 16:54:59 evilapp: " + hdr,
		"2026-12-02T16:54:59Z evilapp[9]: " + hdr,
	} {
		if rt16bVerifies(t, home, prefix+string(l.Raw)) {
			t.Errorf("verifies with another app: %q", prefix)
		}
	}
}

// TestAttackSyslogTimestampTrailingJunk: isClock/isRFC3339 read only the
// first 8/19 bytes, so "16:54:59evilapp:" is a "clock". RFC 3164/3339
// parsers fail the timestamp and then read the tag from the line start.
func TestAttackSyslogTimestampTrailingJunk(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	for _, prefix := range []string{
		"<133>Dec  2 16:54:59evilapp: host mcpseal: ",
		"<133>2026-12-02T16:54:59evilapp: host mcpseal: ",
	} {
		if rt16bVerifies(t, home, prefix+string(l.Raw)) {
			t.Errorf("verifies with a timestamp no parser reads: %q", prefix)
		}
	}
}

// TestAttackSyslogUnicodeSpaceInPrefix: receiverPrefix splits with
// bytes.Fields (tab, NBSP, U+2003...) but syslog parsers split on ' '.
// "Dec\t2" is no RFC 3164 timestamp; rsyslog then reads the TAG from the
// line start ("Dec\t2" up to ' ' or ':').
func TestAttackSyslogUnicodeSpaceInPrefix(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	for _, prefix := range []string{
		"<133>Dec\t2\t16:54:59\thost mcpseal: ",
		"<133>Dec\u00a02 16:54:59 host\u2003mcpseal: ",
	} {
		if rt16bVerifies(t, home, prefix+string(l.Raw)) {
			t.Errorf("verifies though parsers see no timestamp/host: %q", prefix)
		}
	}
}

// TestAttackSyslogSDBracketSplitsGrok: sdElementLen honours quotes and
// '\]' (as RFC 5424 says), but Logstash grok SYSLOG5424SD is \[%{DATA}\]+
// (lazy) followed by " +" GREEDYDATA: it ends the SD at the first "] ".
// A relay-style element whose value holds "\] FAKE" makes grok's
// syslog5424_msg begin with attacker text instead of the event.
func TestAttackSyslogSDBracketSplitsGrok(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	op := printUS(lineMember(l.Raw, "op"), 32)
	ours := rt16dSD(l.Seq, l.Prev, l.Hash)
	for _, line := range []string{
		"<133>1 - h mcpseal 1 " + op + ` [x@1 a="\] outcome=allowed"]` + ours + " " + string(l.Raw),
		"<133>1 - h mcpseal 1 " + op + ` [x@1 a="] outcome=allowed"]` + ours + " " + string(l.Raw),
		"<133>1 - h mcpseal 1 " + op + " " + ours + `[x@1 a="\] outcome=allowed"] ` + string(l.Raw),
	} {
		if rt16bVerifies(t, home, line) {
			t.Errorf("verifies while grok's message is other text: %q", line[:80])
		}
	}
}

// TestAttackOTLPResourceAttributeShadowsSeverity: resource attributes are
// free but for service.name and mcpseal.audit*. The Collector's
// splunk_hec exporter sets fields otel.log.severity.text/number from the
// record, then merges resource attributes into the same fields map (from
// memory of mapLogRecordToSplunkEvent; not re-checked here), so Splunk
// shows INFO for a refused (WARN) event; com.splunk.* similarly retarget.
func TestAttackOTLPResourceAttributeShadowsSeverity(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	rec := `{"timeUnixNano":"1","severityNumber":13,"severityText":"WARN","body":{"stringValue":` + jsonString(t, l.Raw) + `},"attributes":[` +
		`{"key":"mcpseal.audit.seq","value":{"intValue":"1"}},{"key":"mcpseal.audit.prev","value":{"stringValue":"` + l.Prev + `"}},{"key":"mcpseal.audit.hash","value":{"stringValue":"` + l.Hash + `"}}]}`
	doc := `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"mcpseal"}},` +
		`{"key":"otel.log.severity.text","value":{"stringValue":"INFO"}},{"key":"otel.log.severity.number","value":{"intValue":"9"}}]},` +
		`"scopeLogs":[{"scope":{"name":"mcpseal.audit"},"logRecords":[` + rec + `]}]}]}`
	if rt16bVerifies(t, home, doc) {
		t.Error("verifies with resource attributes naming another severity")
	}
}
