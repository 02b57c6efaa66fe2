package siem

// Ninth red team of the copy checks (issue 16), against cdcd32e. Each
// TestAttack* is a copy `audit verify --stream` accepts while a named
// parser reads another app, severity or message.

import (
	"strconv"
	"strings"
	"testing"
)

// TestAttackSyslogIPv6HostIsRsyslogTag: isHost now takes any zone-less
// IPv6 literal via netip, including ones ending in ':' ("cafe::", "::")
// that the old rule refused. rsyslog's pmrfc3164 (tools/pmrfc3164.c,
// read) never takes ':' in a HOSTNAME: the host loop stops at it, the
// field is not a host, and TAG is read from the same place up to and
// including the first ':': TAG "cafe:", programname "cafe", MSG
// ": mcpseal: {...}". An attacker picks any hex word (cafe, dead, beef,
// fade, c0de, ad, ...) as the app. Confidence: high for rsyslog (code
// read); grok's IPORHOST reads these as a host.
func TestAttackSyslogIPv6HostIsRsyslogTag(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	pri := "<" + strconv.Itoa(facilityLocal0*8+severity(l)) + ">"
	_ = pri
	checkPrefixes(t, home, l.Raw, false, "verifies with an IPv6 host rsyslog reads as the tag",
		pri+"Dec  2 16:54:59 cafe:: mcpseal: ",
		pri+"Dec  2 16:54:59 dead:: mcpseal[1]: ",
		pri+"2026-12-02T16:54:59Z fade::1 mcpseal: ",
		"Dec  2 16:54:59 c0de::1 mcpseal: ",
		"Dec  2 16:54:59 :: mcpseal: ",
	)
}

// TestAttackSyslogOverlongHostIsRsyslogTag: isHost has no length bound.
// pmrfc3164's host loop stops at CONF_HOSTNAME_MAXSIZE-1 bytes; the byte
// there is not a space, so the field is not a host and TAG is read from
// it (up to CONF_TAG_MAXSIZE-2 bytes): programname "evilapp....",
// the rest of the field and "mcpseal: {...}" the message. Confidence:
// high for the loop (code read), medium on the exact constant (512 in
// current rsyslog; 1000 bytes is past any value used).
func TestAttackSyslogOverlongHostIsRsyslogTag(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	pri := "<" + strconv.Itoa(facilityLocal0*8+severity(l)) + ">"
	_ = pri
	host := "evilapp" + strings.Repeat(".", 1000) + "x"
	checkPrefixes(t, home, l.Raw, false, "verifies with a host longer than rsyslog reads",
		pri+"Dec  2 16:54:59 "+host+" mcpseal: ",
		"Dec  2 16:54:59 "+host+" mcpseal[1]: ",
	)
}

// TestAttackSyslogHostGrokDoesNotMatch: isHost takes '_' and a leading
// '-' or '.', and the 5424 HOSTNAME is only 1*PRINTUSASCII. Logstash's
// grok SYSLOGHOST/IPORHOST is IP or HOSTNAME
// \b(?:[0-9A-Za-z][0-9A-Za-z-]{0,62})(?:\.(?:[0-9A-Za-z][0-9A-Za-z-]{0,62}))*(\.?|\b):
// no '_', no leading '-' or '.', no '!', '@', '[' . SYSLOGLINE and
// SYSLOG5424LINE ((?:%{IPORHOST:syslog5424_host}|-) +...) do not match:
// _grokparsefailure, no program, severity or message field. Confidence:
// high (pattern as shipped in logstash-patterns-core); impact is an
// unparsed event rather than a chosen app.
func TestAttackSyslogHostGrokDoesNotMatch(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	pri := "<" + strconv.Itoa(facilityLocal0*8+severity(l)) + ">"
	_ = pri
	checkPrefixes(t, home, l.Raw, false, "verifies with a host grok does not match",
		"Dec  2 16:54:59 gate_1 mcpseal: ",
		pri+"Dec  2 16:54:59 -gate mcpseal[1]: ",
		pri+"2026-12-02T16:54:59Z .gate mcpseal: ",
		rt17Header(l, "-", "gate_1", "1"),
		rt17Header(l, "-", "evil!host", "1"),
		rt17Header(l, "-", "[::1]", "1"),
		rt17Header(l, "-", "user@gate", "1"),
	)
}

// TestAttackSyslogOctetCountWithoutPRI: an exact octet count is taken
// before a tag with no PRI at all: "N mcpseal: {...}". An octet count is
// wire framing (RFC 6587), so this is a captured message that had no
// PRI. rsyslog (parser.c: no '<' gives DEFUPRI, user.notice) and
// syslog-ng (default-priority, user.notice) store it at user.notice, while the
// event is local0.notice or local0.info: the SIEM shows another facility
// always, and another severity for every informational event. mcpseal never sends a message without PRI.
// Confidence: medium-high (defaults as documented/read from memory).
func TestAttackSyslogOctetCountWithoutPRI(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	pri := "<" + strconv.Itoa(facilityLocal0*8+severity(l)) + ">"
	_ = pri
	for _, tag := range []string{"mcpseal: ", "mcpseal[4242]: "} {
		m := tag + string(l.Raw)
		if rt16bVerifies(t, home, strconv.Itoa(len(m))+" "+m) {
			t.Errorf("verifies an octet-counted message without PRI (%q): rsyslog/syslog-ng show user.notice", tag)
		}
	}
}

// TestAttackSyslogTagPIDOverlong: isTag's PID is any POSINT, unbounded.
// pmrfc3164 reads TAG only up to CONF_TAG_MAXSIZE-2 bytes (code read):
// with a 1000-digit PID the TAG ends inside the digits and the MSG is
// "<digits>]: {...}", not the event. With Logstash's ECS grok
// (%{POSINT:[process][pid]:int}) the PID overflows a long and
// Elasticsearch rejects the document (process.pid is a long). Confidence:
// high for rsyslog's MSG, medium for the ECS rejection.
func TestAttackSyslogTagPIDOverlong(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	pri := "<" + strconv.Itoa(facilityLocal0*8+severity(l)) + ">"
	_ = pri
	pid := "1" + strings.Repeat("9", 999)
	checkPrefixes(t, home, l.Raw, false, "verifies with a PID no parser keeps",
		pri+"Dec  2 16:54:59 gate-1 mcpseal["+pid+"]: ",
		"Dec  2 16:54:59 gate-1 mcpseal[99999999999999999999]: ",
	)
}

// TestAttackSyslog5424FieldsOverRFCLength: HOSTNAME and PROCID are
// checked for PRINTUSASCII but not for RFC 5424's lengths (HOSTNAME
// 1*255, PROCID 1*128). rsyslog's pmrfc5424 bounds each header field and
// on an over-long one gives up the 5424 parse (the message then goes to
// the next parser in the chain, pmrfc3164, which reads "1" or the
// timestamp line as its own and no APP-NAME mcpseal); grok
// SYSLOG5424LINE is unbounded. Confidence: low-medium (rsyslog's limits
// from memory, not re-read in the time box).
func TestAttackSyslog5424FieldsOverRFCLength(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	pri := "<" + strconv.Itoa(facilityLocal0*8+severity(l)) + ">"
	_ = pri
	checkPrefixes(t, home, l.Raw, false, "verifies with a 5424 field past RFC 5424's length",
		rt17Header(l, "-", strings.Repeat("h", 256), "1"),
		rt17Header(l, "-", "h", strings.Repeat("9", 129)),
	)
}

// TestAttackOTLPResourceSetsSplunkSourceAndSourcetype: resource
// attributes are free but for service names, severities, mcpseal.audit
// keys and Datadog's reserved keys. The Collector's splunk_hec exporter
// (mapLogRecordToSplunkEvent) takes the resource attributes
// com.splunk.source, com.splunk.sourcetype and com.splunk.index as the
// HEC event's source, sourcetype and index: Splunk shows the event as
// from source "evilapp" with sourcetype "evil:app" (sourcetype also picks
// Splunk's field extractions), in another index. Confidence: medium
// (exporter defaults from memory; a source/sourcetype is Splunk's notion
// of the app).
func TestAttackOTLPResourceSetsSplunkSourceAndSourcetype(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	pri := "<" + strconv.Itoa(facilityLocal0*8+severity(l)) + ">"
	_ = pri
	for _, k := range []string{"com.splunk.source", "com.splunk.sourcetype", "com.splunk.index"} {
		extra := `,{"key":"` + k + `","value":{"stringValue":"evilapp"}}`
		if rt16bVerifies(t, home, rt17Export(t, l, extra, `{"name":"mcpseal.audit"}`)) {
			t.Errorf("verifies with resource attribute %s, which splunk_hec makes the event's", k)
		}
	}
}

// TestAttackOTLPResourceSetsDatadogAliases: reservedLabel lists message,
// msg, status, service, ddsource, ddtags, body; Datadog's own reserved
// attribute remappers also read "log" (message), "level" (status),
// "syslog.appname" / "dd.service" (service) and "hostname"/"host". The
// exporter writes resource attributes into the item unchanged, so these
// reach Datadog's preprocessing. Confidence: low-medium: the remappers
// take the first attribute found in their list, and the exporter always
// writes message/status/service, which come first; kept as a gap in the
// list rather than a proven swap.
func TestAttackOTLPResourceSetsDatadogAliases(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	pri := "<" + strconv.Itoa(facilityLocal0*8+severity(l)) + ">"
	_ = pri
	for _, k := range []string{"log", "level", "syslog.appname", "dd.service"} {
		extra := `,{"key":"` + k + `","value":{"stringValue":"evilapp"}}`
		if rt16bVerifies(t, home, rt17Export(t, l, extra, `{"name":"mcpseal.audit"}`)) {
			t.Errorf("verifies with resource attribute %q, a Datadog reserved alias", k)
		}
	}
}
