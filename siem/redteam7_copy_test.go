package siem

import (
	"testing"
)

// TestAttackSyslogLoneNumberAfterPRI: with the PRI stripped, one field
// before the tag was taken as an RFC 6587 octet count. But the count
// comes before the PRI, never after it: to an RFC 3164 parser
// "<133>123 mcpseal: " has no timestamp, and "123" is the host or the
// tag, never mcpseal.
func TestAttackSyslogLoneNumberAfterPRI(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	checkPrefixes(t, home, l.Raw, false, "verifies with a number where a parser reads the app",
		"<133>123 mcpseal: ",
		"<133>7 mcpseal[1]: ",
	)
}

// TestAttackSyslogTimestampOutOfRange: the clock and the day were checked
// by shape only. A parser refuses "Dec 32" or "99:99:99" as a timestamp
// and then reads the tag from the start of the line.
func TestAttackSyslogTimestampOutOfRange(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	hdr := "<133>1 - h mcpseal 1 " + printUS(lineMember(l.Raw, "op"), 32) + " " + rt16dSD(l.Seq, l.Prev, l.Hash) + " "
	if !rt16bVerifies(t, home, "Dec 31 16:54:59 host "+hdr+string(l.Raw)) {
		t.Fatal("setup: a receiver's timestamp and host before the header do not verify")
	}
	checkPrefixes(t, home, l.Raw, false, "verifies with a timestamp no parser reads",
		"<133>Dec 32 16:54:59 host mcpseal: ",
		"<133>Dec 00 16:54:59 host mcpseal: ",
		"<133>Dec  0 16:54:59 host mcpseal: ",
		"<133>Dec  2 99:99:99 host mcpseal: ",
		"<133>Dec  2 24:00:00 host mcpseal: ",
		"<133>Dec  2 16:60:00 host mcpseal: ",
		"<133>Dec  2 16:54:61 host mcpseal: ",
		"Dec 32 16:54:59 host "+hdr,
		"Dec  2 16:54:99 host "+hdr,
	)
}

// TestAttackSyslogRunOfSpaces: runs of spaces counted as one, but a
// syslog parser splits at each: "host  mcpseal: " has an empty field
// where the tag starts, and "<133> Dec" no timestamp after the PRI.
// Only the day of an RFC 3164 timestamp is padded with a space.
func TestAttackSyslogRunOfSpaces(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	checkPrefixes(t, home, l.Raw, false, "verifies with a run of spaces where a parser splits",
		"<133>Dec  2 16:54:59 host  mcpseal: ",
		"<133>Dec  2 16:54:59  host mcpseal: ",
		"<133>Dec  2  16:54:59 host mcpseal: ",
		"<133>Dec  12 16:54:59 host mcpseal: ",
		"<133>Dec   2 16:54:59 host mcpseal: ",
		"<133> Dec  2 16:54:59 host mcpseal: ",
		"<133>2026-12-02T16:54:59Z  host mcpseal: ",
		" <133>Dec  2 16:54:59 host mcpseal: ",
	)
}

// TestSyslogReceiverPrefixesStillVerify: the forms receivers write.
func TestSyslogReceiverPrefixesStillVerify(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	checkPrefixes(t, home, l.Raw, true, "refuses a receiver's form",
		"<133>Dec  2 16:54:59 host mcpseal[1]: ",
		"<133>Dec 2 16:54:59 host mcpseal: ",
		"<133>Dec 12 16:54:59 host mcpseal: ",
		"<133>Dec 31 23:59:60 host mcpseal: ",
		"Dec  2 16:54:59 host mcpseal[1]: ",
		"<133>2026-12-02T16:54:59.123Z host mcpseal[1]: ",
		"2026-12-02T16:54:59+01:00 host mcpseal: ",
		"mcpseal: ",
		"<133>mcpseal: ",
	)
}

// TestAttackOTLPScopeAttributeServiceName: the scope's attributes were
// free but for mcpseal.audit* and severities; an exporter that merges
// scope attributes into the record's labels (as it does the resource's)
// shows a scope's service.name as the app.
func TestAttackOTLPScopeAttributeServiceName(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	sev, sevText := "9", "INFO"
	if severity(l) == sevNotice {
		sev, sevText = "13", "WARN"
	}
	rec := `{"timeUnixNano":"1","severityNumber":` + sev + `,"severityText":"` + sevText + `","body":{"stringValue":` + jsonString(t, l.Raw) + `},"attributes":[` +
		`{"key":"mcpseal.audit.seq","value":{"intValue":"1"}},{"key":"mcpseal.audit.prev","value":{"stringValue":"` + l.Prev + `"}},{"key":"mcpseal.audit.hash","value":{"stringValue":"` + l.Hash + `"}}]}`
	doc := func(scopeAttr string) string {
		return `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"mcpseal"}}]},` +
			`"scopeLogs":[{"scope":{"name":"mcpseal.audit"` + scopeAttr + `},"logRecords":[` + rec + `]}]}]}`
	}
	if !rt16bVerifies(t, home, doc("")) {
		t.Fatal("setup: the export as sent does not verify")
	}
	for _, key := range []string{"service.name", "service_name", "Service.Name"} {
		if rt16bVerifies(t, home, doc(`,"attributes":[{"key":"`+key+`","value":{"stringValue":"evilapp"}}]`)) {
			t.Errorf("verifies with a scope attribute %q naming another app", key)
		}
	}
}

// checkPrefixes says whether each prefix, before event, verifies as
// want, naming what it is when not.
func checkPrefixes(t *testing.T, home string, event []byte, want bool, what string, prefixes ...string) {
	t.Helper()
	for _, prefix := range prefixes {
		if rt16bVerifies(t, home, prefix+string(event)) != want {
			t.Errorf("%s: %q", what, prefix)
		}
	}
}
