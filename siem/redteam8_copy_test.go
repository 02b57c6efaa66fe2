package siem

// The eighth red team of the copy checks (issue 16). Each TestAttack* is a
// receiver's copy that `audit verify --stream` accepts while a named
// parser shows another app, severity, message id or message. The
// TestColonlessTag* tests hold a form rsyslog writes by default that
// stays refused, fail closed, since grok reads no app from it.

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/audit"
)

// rt17Header is an RFC 5424 header for l with the given TIMESTAMP,
// HOSTNAME and PROCID fields, APP-NAME mcpseal, the event's MSGID and
// mcpseal's structured data, ending in the space before the event.
func rt17Header(l audit.Line, ts, host, pid string) string {
	return fmt.Sprintf("<%d>1 %s %s mcpseal %s %s %s ", facilityLocal0*8+severity(l), ts, host, pid,
		printUS(lineMember(l.Raw, "op"), 32), rt16dSD(l.Seq, l.Prev, l.Hash))
}

// TestAttackSyslogHostFieldNotAHostToRsyslog: isHost takes letters,
// digits, '.', '-', '_' and ':' in any order. rsyslog's pmrfc3164
// (tools/pmrfc3164.c, read for this test) takes a field as HOSTNAME only
// if it is made of isalnum, '.', '_' and '-', its LAST character is
// alphanumeric, and a space follows it; otherwise it parses the TAG from
// the same place, up to ':' or ' '. So "evilapp:x" is TAG "evilapp:"
// (message "x mcpseal: {...}"), and "evilapp-", "evilapp.", "evilapp_"
// are TAG "evilapp-"... (message "mcpseal: {...}", not JSON): the SIEM
// shows app evilapp. Confidence: high (code read). A real IPv6 literal
// (syslog-ng's HOST with keep-hostname(no)) is left out of this test: it
// is faithful, and rsyslog misreads it too.
func TestAttackSyslogHostFieldNotAHostToRsyslog(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	if !rt16bVerifies(t, home, "<133>Dec  2 16:54:59 gate-1 mcpseal: "+string(l.Raw)) {
		t.Fatal("setup: the forwarded form with a host does not verify")
	}
	checkPrefixes(t, home, l.Raw, false, "verifies with a host field rsyslog reads as the tag",
		"<133>Dec  2 16:54:59 evilapp:x mcpseal: ",
		"<133>Dec  2 16:54:59 evilapp:1 mcpseal[1]: ",
		"<133>Dec  2 16:54:59 evilapp- mcpseal: ",
		"<133>Dec  2 16:54:59 evilapp. mcpseal[1]: ",
		"<133>Dec  2 16:54:59 evilapp_ mcpseal: ",
		"<133>2026-12-02T16:54:59Z evilapp:x mcpseal: ",
		"Dec  2 16:54:59 evilapp- "+rt17Header(l, "-", "h", "1"),
	)
}

// TestAttackSyslogTimestampRsyslogRejects: the RFC 3339 field before a
// tag or header is checked with Go's time.Parse, which takes a comma as
// the fraction's separator, any year, any number of fraction digits and
// offsets up to +99:99. rsyslog's ParseTIMESTAMP3339
// (runtime/datetime.c, read for this test) wants '.', a year below 2100
// (since 2017), an offset hour 0..23 and minute 0..59, and stops reading
// fraction digits near INT_MAX, leaving a digit where the zone must be.
// Failing both timestamp forms, pmrfc3164 parses HOSTNAME and TAG from
// the field itself: "2026-12-02T16" is no host (':' follows), so the TAG
// is "2026-12-02T16:" and the message "54:59,5Z host mcpseal: {...}".
// Confidence: high for rsyslog (code read); grok's TIMESTAMP_ISO8601
// takes the comma form.
func TestAttackSyslogTimestampRsyslogRejects(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	checkPrefixes(t, home, l.Raw, false, "verifies with a timestamp rsyslog refuses",
		"<133>2026-12-02T16:54:59,5Z host mcpseal: ",
		"<133>2100-12-02T16:54:59Z host mcpseal: ",
		"<133>9999-12-02T16:54:59Z host mcpseal[1]: ",
		"<133>2026-12-02T16:54:59+24:00 host mcpseal: ",
		"<133>2026-12-02T16:54:59+23:60 host mcpseal: ",
		"<133>2026-12-02T16:54:59.123456789012Z host mcpseal: ",
		"2026-12-02T16:54:59,5Z host "+rt17Header(l, "-", "h", "1"),
	)
}

// TestAttackSyslog5424TimestampUnchecked: in an RFC 5424 header only
// APP-NAME and MSGID are read; TIMESTAMP may be anything without a space.
// rsyslog's pmrfc5424 (tools/pmrfc5424.c, read for this test) parses
// TIMESTAMP as "-" or ParseTIMESTAMP3339 and, when that fails, stops:
// HOSTNAME, APP-NAME, PROCID, MSGID and STRUCTURED-DATA stay unset and
// MSG starts right after the version, "evilapp: gate-1 mcpseal 1 call
// [mcpseal@32473 ...] {...}". The SIEM shows no app mcpseal, no message
// id, and a message that is not the event. grok SYSLOG5424LINE wants
// TIMESTAMP_ISO8601 or "-" there and does not match at all. Confidence:
// high (code read).
func TestAttackSyslog5424TimestampUnchecked(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	for _, ts := range []string{"2026-12-02T16:54:59Z", "2026-12-02T16:54:59.123456+01:00", "-"} {
		if !rt16bVerifies(t, home, rt17Header(l, ts, "gate-1", "1")+string(l.Raw)) {
			t.Fatalf("setup: a header with TIMESTAMP %q does not verify", ts)
		}
	}
	for _, ts := range []string{
		"evilapp:",
		"yesterday",
		"",
		"2026-12-02T16:54:59,5Z",
		"2100-01-01T00:00:00Z",
		"2026-12-02T16:54:59+24:00",
		"2026-12-02t16:54:59z",
	} {
		if rt16bVerifies(t, home, rt17Header(l, ts, "gate-1", "1")+string(l.Raw)) {
			t.Errorf("verifies with a TIMESTAMP rsyslog cannot parse: %q", ts)
		}
	}
}

// TestAttackSyslog5424FieldEmptyOrNotPrintASCII: HOSTNAME and PROCID are
// not read; RFC 5424 makes them NILVALUE or 1*PRINTUSASCII (33..126).
// An empty field (a run of two spaces) shifts grok's fields
// (SYSLOG5424BASE separates them with " +"), so SYSLOG5424LINE no longer
// matches and the SIEM shows the line unparsed; a bare CR is an event
// break to Splunk's default LINE_BREAKER ([\r\n]+), which shows
// "<133>1 - h" and "x mcpseal 1 call [...] {...}" as two events; NUL and
// U+2028 end or break the line for other readers. Confidence: medium
// (grok pattern read; Splunk's default from its documentation, with
// SHOULD_LINEMERGE off as the syslog source types set it).
func TestAttackSyslog5424FieldEmptyOrNotPrintASCII(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	for _, f := range []struct{ host, pid string }{
		{"", "1"},
		{"h", ""},
		{"h\rx", "1"},
		{"h", "1\x00"},
		{"h\u2028x", "1"},
		{"h\x7f", "1"},
	} {
		if rt16bVerifies(t, home, rt17Header(l, "-", f.host, f.pid)+string(l.Raw)) {
			t.Errorf("verifies with HOSTNAME %q PROCID %q", f.host, f.pid)
		}
	}
}

// TestAttackSyslogTagPIDNotPOSINT: isTag takes any digits as the PID.
// Logstash's grok SYSLOGPROG is %{PROG:program}(?:\[%{POSINT:pid}\])?
// with POSINT \b(?:[1-9][0-9]*)\b: "[0]" and "[007]" do not match, the
// optional " %{SYSLOGPROG}:" of SYSLOGBASE2 falls to its empty branch,
// and SYSLOGLINE's message is "mcpseal[0]: {...}" with no program. The
// SIEM shows no app and text before the event. Confidence: high (the
// pattern as shipped in logstash-patterns-core).
func TestAttackSyslogTagPIDNotPOSINT(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	if !rt16bVerifies(t, home, "Dec  2 16:54:59 gate-1 mcpseal[1]: "+string(l.Raw)) {
		t.Fatal("setup: mcpseal[1] does not verify")
	}
	checkPrefixes(t, home, l.Raw, false, "verifies with a PID grok does not read",
		"Dec  2 16:54:59 gate-1 mcpseal[0]: ",
		"Dec  2 16:54:59 gate-1 mcpseal[007]: ",
		"<133>2026-12-02T16:54:59Z gate-1 mcpseal[00]: ",
	)
}

// TestAttackSyslogOctetCountDoesNotFrame: a leading number is taken as an
// RFC 6587 octet count and not compared with what it frames. To a reader
// that frames by it (rsyslog imtcp/imptcp, syslog-ng network(), a replay
// of the capture) "40 <133>1 ..." is a 40-byte message ending inside the
// header, MSG empty, and the rest of the line a second frame that starts
// with no digit: read as a message of its own, without mcpseal's header
// (rsyslog falls back to LF framing for it). A count past the line's end
// swallows the next line into this message: the next event is lost to
// the SIEM. Only the exact count is the frame mcpseal sent. Confidence:
// medium (the framing is RFC 6587's; a line-per-record capture is this
// check's own assumption). TestHeldFaithfulForms' "123 <...>" would need
// its real count.
func TestAttackSyslogOctetCountDoesNotFrame(t *testing.T) {
	home, _ := newLog(t, 2)
	ls := rt16Lines(t, home, 2)
	s := &syslog{host: "gate-1", pid: "4242"}
	m0, m1 := string(s.message(ls[0])), string(s.message(ls[1]))
	exact := strconv.Itoa(len(m0)) + " " + m0 + "\n" + strconv.Itoa(len(m1)) + " " + m1
	if !rt16bVerifies(t, home, exact) {
		t.Fatal("setup: the exact octet-counted frames do not verify")
	}
	for _, n := range []int{40, len(m0) - 1, len(m0) + 1 + len(strconv.Itoa(len(m1))) + 1 + len(m1)} {
		c := strconv.Itoa(n) + " " + m0 + "\n" + strconv.Itoa(len(m1)) + " " + m1
		if rt16bVerifies(t, home, c) {
			t.Errorf("verifies with octet count %d for a %d-byte message", n, len(m0))
		}
	}
}

// rt17Record is mcpseal's log record for l as OTLP JSON.
func rt17Record(t *testing.T, l audit.Line) string {
	sev, sevText := "9", "INFO"
	if severity(l) == sevNotice {
		sev, sevText = "13", "WARN"
	}
	return `{"timeUnixNano":"1","severityNumber":` + sev + `,"severityText":"` + sevText + `","body":{"stringValue":` + jsonString(t, l.Raw) + `},"attributes":[` +
		`{"key":"mcpseal.audit.seq","value":{"intValue":"` + strconv.FormatInt(l.Seq, 10) + `"}},{"key":"mcpseal.audit.prev","value":{"stringValue":"` + l.Prev + `"}},` +
		`{"key":"mcpseal.audit.hash","value":{"stringValue":"` + l.Hash + `"}}],"eventName":"mcpseal.audit"}`
}

func rt17Export(t *testing.T, l audit.Line, resourceExtra, scope string) string {
	return `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"mcpseal"}}` + resourceExtra + `]},` +
		`"scopeLogs":[{"scope":` + scope + `,"logRecords":[` + rt17Record(t, l) + `]}]}]}`
}

// TestAttackOTLPResourceAttributeReplacesDatadogMessage: resource and
// scope attributes are free but for service names, severities and
// mcpseal.audit keys. The Collector's Datadog exporter
// (opentelemetry-mapping-go pkg/otlp/logs transform.go, read for this
// test) copies every resource and scope attribute into the log item's
// AdditionalProperties, and datadogV2.HTTPLogItem.MarshalJSON writes
// AdditionalProperties after "message", overwriting it: a resource
// attribute message "user logged in" is the message Datadog stores and
// shows, the event is gone from it. ("ddtags" likewise replaces the
// item's tags, service tag included.) Confidence: high (code read).
func TestAttackOTLPResourceAttributeReplacesDatadogMessage(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	attr := func(k string) string { return `{"key":"` + k + `","value":{"stringValue":"user logged in"}}` }
	if !rt16bVerifies(t, home, rt17Export(t, l, "", `{"name":"mcpseal.audit"}`)) {
		t.Fatal("setup: the export as sent does not verify")
	}
	for _, c := range []struct{ name, doc string }{
		{"resource message", rt17Export(t, l, ","+attr("message"), `{"name":"mcpseal.audit"}`)},
		{"scope message", rt17Export(t, l, "", `{"name":"mcpseal.audit","attributes":[`+attr("message")+`]}`)},
		{"resource ddtags", rt17Export(t, l, ","+attr("ddtags"), `{"name":"mcpseal.audit"}`)},
	} {
		if rt16bVerifies(t, home, c.doc) {
			t.Errorf("%s: verifies while Datadog's exporter shows another message or tags", c.name)
		}
	}
}

// TestAttackOTLPScopeNameOnlyAsAttribute: appIs looks for the scope's
// name both as the scope's name member and as an attribute keyed "name",
// so a scope with no name and an attribute name=mcpseal.audit passes. No
// exporter reads a scope attribute as the scope's name: the Collector's
// exporters (splunk_hec otel.scope.name, elasticsearch scope.name,
// pdata's InstrumentationScope.Name) show an empty scope. Confidence: high
// that the check departs from its own rule ("the scope's name member");
// the SIEM impact is an empty scope name.
func TestAttackOTLPScopeNameOnlyAsAttribute(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	if rt16bVerifies(t, home, rt17Export(t, l, "", `{"attributes":[{"key":"name","value":{"stringValue":"mcpseal.audit"}}]}`)) {
		t.Error("verifies with a scope that has no name, only an attribute called name")
	}
}

// rsyslogTime is the TIMESTAMP of mcpseal's message for l as rsyslog
// parsed it (ParseTIMESTAMP3339: the fraction as an int and its digit
// count).
type rsyslogTime struct {
	t         time.Time
	frac      int32
	precision int
	zulu      bool
}

func rt17SentTime(t *testing.T, l audit.Line) rsyslogTime {
	t.Helper()
	s := &syslog{host: "gate-1", pid: "4242"}
	f := bytes.SplitN(s.message(l), []byte(" "), 3)
	ts := string(f[1])
	tm, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		t.Fatalf("setup: mcpseal sent TIMESTAMP %q", ts)
	}
	r := rsyslogTime{t: tm, zulu: strings.HasSuffix(ts, "Z")}
	if _, digits, ok := strings.Cut(ts, "."); ok {
		if i := strings.IndexAny(digits, "Z+-"); i >= 0 {
			digits = digits[:i]
		}
		for _, c := range digits {
			r.frac = r.frac*10 + int32(c-'0')
		}
		r.precision = len(digits)
	}
	return r
}

// rfc3339 is rsyslog's formatTimestamp3339 of r. Before 8.2606.0
// (commit 38bc53750, April 2026; every distribution's rsyslog) it prints
// tenPowers[(precision-1)%6] worth of digits computed with a short, so a
// fraction of more than 6 digits comes out as arbitrary bytes; since
// then the fraction is cut to 6 digits.
func (r rsyslogTime) rfc3339(before8_2606 bool) string {
	b := []byte(r.t.Format("2006-01-02T15:04:05"))
	if r.precision > 0 {
		tenPowers := []int32{1, 10, 100, 1000, 10000, 100000}
		secfrac, power := r.frac, int32(0)
		if before8_2606 {
			power = tenPowers[(r.precision-1)%6]
		} else {
			p := r.precision
			for p > 6 {
				secfrac /= 10
				p--
			}
			power = tenPowers[p-1]
		}
		b = append(b, '.')
		for power > 0 {
			digit := int16(secfrac / power)
			secfrac -= int32(digit) * power
			power /= 10
			b = append(b, byte(digit)+'0')
		}
	}
	if r.zulu {
		return string(append(b, 'Z'))
	}
	return string(append(b, r.t.Format("-07:00")...))
}

// rfc3164 is rsyslog's formatTimestamp3164 of r: "Mmm dd hh:mm:ss", the
// day padded with a space.
func (r rsyslogTime) rfc3164() string {
	return r.t.Format("Jan _2 15:04:05")
}

// TestColonlessTagOfRsyslogTraditionalFormatRefused: kept refused, fail
// closed (docs/threat-model.md gap 27, docs/audit.md). rsyslog's %syslogtag%
// for an RFC 5424 message is emulated by tryEmulateTAG (runtime/msg.c,
// current master read for this test) as APP-NAME "[" PROCID "]", with no
// colon, and its built-in RSYSLOG_TraditionalFileFormat and
// RSYSLOG_TraditionalForwardFormat (tools/smtradfile.c, smtradfwd.c) write
// TIMESTAMP HOSTNAME TAG, a space, MSG: "Dec  3 09:04:16 gate-1
// mcpseal[4242] {...}". That is what a default rsyslog receiver's files
// hold for every mcpseal message, and it is refused (the tag must end in
// ':'). rsyslog's own pmrfc3164 reads it back as TAG "mcpseal[4242]",
// programname mcpseal, but grok SYSLOGLINE wants "PROG[PID]:" and reads
// no program from it, and a message that is not the event: so it stays
// refused, and a receiver whose copies are to be verified writes
// RSYSLOG_SyslogProtocol23Format or a template whose tag ends in ':'.
// Confidence: high (code read).
func TestColonlessTagOfRsyslogTraditionalFormatRefused(t *testing.T) {
	home, _ := newLog(t, 3)
	ls := rt16Lines(t, home, 3)
	var file, fwd strings.Builder
	for _, l := range ls {
		r := rt17SentTime(t, l)
		fmt.Fprintf(&file, "%s gate-1 mcpseal[4242] %s\n", r.rfc3164(), l.Raw)
		fmt.Fprintf(&fwd, "<%d>%s gate-1 mcpseal[4242] %s\n", facilityLocal0*8+severity(l), r.rfc3164(), l.Raw)
	}
	for name, c := range map[string]string{"RSYSLOG_TraditionalFileFormat": file.String(), "RSYSLOG_TraditionalForwardFormat": fwd.String()} {
		if copyVerifies(t, home, []byte(c)) {
			t.Errorf("%s of mcpseal's messages verifies, though grok reads no program from it: %.60q", name, c)
		}
	}
}

// TestColonlessTagOfRsyslogFileFormatRefused: kept refused, as above.
// RSYSLOG_FileFormat (tools/smfile.c)
// and RSYSLOG_ForwardFormat (smfwd.c) write %TIMESTAMP:::date-rfc3339%
// with the same colon-less tag. With rsyslog 8.2606.0 or later the 9-digit
// fraction mcpseal sends is cut to 6 digits ("...16.172775Z gate-1
// mcpseal[4242] {...}"): refused for the tag alone. Every earlier rsyslog
// (all distributions') prints it through formatTimestamp3339's short
// arithmetic with tenPowers[(9-1)%6]: three arbitrary bytes ("n41",
// "\xed76"), about 96% of them not an RFC 3339 time: those copies are
// refused for the timestamp too; mcpseal now sends at most 6 digits, as
// RFC 5424 requires (TIME-SECFRAC = "." 1*6DIGIT), so only the tag is
// left. Confidence: high (code read, both versions of runtime/datetime.c).
func TestColonlessTagOfRsyslogFileFormatRefused(t *testing.T) {
	home, _ := newLog(t, 24)
	ls := rt16Lines(t, home, 24)
	for _, c := range []struct {
		name string
		old  bool
		fwd  bool
	}{
		{"RSYSLOG_FileFormat, rsyslog 8.2606+", false, false},
		{"RSYSLOG_ForwardFormat, rsyslog 8.2606+", false, true},
		{"RSYSLOG_FileFormat, rsyslog before 8.2606", true, false},
		{"RSYSLOG_ForwardFormat, rsyslog before 8.2606", true, true},
	} {
		var b strings.Builder
		for _, l := range ls {
			if c.fwd {
				fmt.Fprintf(&b, "<%d>", facilityLocal0*8+severity(l))
			}
			fmt.Fprintf(&b, "%s gate-1 mcpseal[4242] %s\n", rt17SentTime(t, l).rfc3339(c.old), l.Raw)
		}
		if copyVerifies(t, home, []byte(b.String())) {
			t.Errorf("%s of mcpseal's messages verifies, though grok reads no program from it: %.70q", c.name, b.String())
		}
	}
}
