package siem

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func rt16dSD(seq int64, prev, hash string) string {
	return fmt.Sprintf(`[%s seq="%d" prev="%s" hash="%s"]`, sdID, seq, prev, hash)
}

// TestAttackSyslogLeadingZeroPRI: priEnd only takes 1-3 digits, so
// "<0134>" is no PRI to checkSyslogHeader (not compared, and find5424
// finds no header). rsyslog/syslog-ng read the PRI digits while they are
// digits: <0134> is local0.info. A refused event (notice, 133) stored as
// info passes; and a whole fake 5424 header (APP, MSGID) hides behind it.
func TestAttackSyslogLeadingZeroPRI(t *testing.T) {
	home, _ := newLog(t, 3)
	ls := rt16Lines(t, home, 3)
	if severity(ls[0]) != sevNotice {
		t.Fatal("setup")
	}
	for _, c := range []struct{ name, prefix string }{
		{"3164 refused shown as info", "<0134>Dec  2 16:54:59 host mcpseal[1]: "},
		{"5424 header: other app/msgid/severity", "<0134>1 2026-12-02T16:54:59Z host evilapp 1 fakeop - mcpseal: "},
	} {
		copyText := c.prefix + string(ls[0].Raw) + "\n"
		for _, l := range ls[1:] {
			copyText += fmt.Sprintf("<%d>1 - h mcpseal 1 %s %s %s\n", facilityLocal0*8+severity(l), printUS(lineMember(l.Raw, "op"), 32), rt16dSD(l.Seq, l.Prev, l.Hash), l.Raw)
		}
		if copyVerifies(t, home, []byte(copyText)) {
			t.Errorf("%s: verifies: %q", c.name, c.prefix)
		}
	}
}

// TestAttackSyslogTagNotFirst: the traditional branch reads only the
// prefix's end. An RFC 3164 parser (rsyslog, syslog-ng, grok SYSLOGLINE)
// takes the first tag after the host: "evilapp", message "mcpseal: {..}"
// (not JSON: the SIEM never sees the event's fields).
func TestAttackSyslogTagNotFirst(t *testing.T) {
	home, _ := newLog(t, 1)
	ls := rt16Lines(t, home, 1)
	for _, prefix := range []string{
		"<133>Dec  2 16:54:59 host evilapp[9]: mcpseal: ",
		"<133>Dec  2 16:54:59 host evilapp[9]: <133>1 - h mcpseal 1 call " + rt16dSD(ls[0].Seq, ls[0].Prev, ls[0].Hash) + " ",
	} {
		if copyVerifies(t, home, []byte(prefix+string(ls[0].Raw)+"\n")) {
			t.Errorf("verifies: %q", prefix)
		}
	}
}

// TestAttackOTLPServiceNameUnchecked: mcpseal sends resource
// service.name "mcpseal"; the check reads no resource attribute but
// mcpseal.audit ones. Every SIEM shows service.name as the app.
func TestAttackOTLPServiceNameUnchecked(t *testing.T) {
	home, _ := newLog(t, 1)
	ls := rt16Lines(t, home, 1)
	l := ls[0]
	rec := `{"severityNumber":13,"severityText":"WARN","body":{"stringValue":` + jsonString(t, l.Raw) + `},"attributes":[` +
		fmt.Sprintf(`{"key":"mcpseal.audit.seq","value":{"intValue":"%d"}},{"key":"mcpseal.audit.prev","value":{"stringValue":%q}},{"key":"mcpseal.audit.hash","value":{"stringValue":%q}},`, l.Seq, l.Prev, l.Hash) +
		`{"key":"service.name","value":{"stringValue":"evil-rec"}},{"key":"event.name","value":{"stringValue":"x"}}],"eventName":"benign.login"}`
	line := `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"evilapp"}}]},"scopeLogs":[{"scope":{"name":"other"},"logRecords":[` + rec + `]}]}]}`
	if copyVerifies(t, home, []byte(line+"\n")) {
		t.Errorf("verifies with service.name evilapp, eventName benign.login")
	}
	_ = strings.TrimSpace
}

// TestHeldFaithfulForms: mainstream stored forms verify (should pass).
func TestHeldFaithfulForms(t *testing.T) {
	home, _ := newLog(t, 2)
	ls := rt16Lines(t, home, 2)
	for _, f := range []func(l int) string{
		func(i int) string { return "2026-12-02T16:54:59.1+00:00 host mcpseal[123]: " }, // rsyslog FileFormat / syslog-ng MSGHDR
		func(i int) string {
			return fmt.Sprintf("<%d>2026-12-02T16:54:59+00:00 host mcpseal[1]: ", 128+severity(ls[i]))
		},
		func(i int) string {
			l := ls[i]
			h := fmt.Sprintf("<%d>1 2026-12-02T16:54:59Z h mcpseal 1 %s %s[origin ip=\"1.2.3.4\"] ", 128+severity(l), lineMember(l.Raw, "op"), rt16dSD(l.Seq, l.Prev, l.Hash))
			return strconv.Itoa(len(h)+len(l.Raw)) + " " + h // an RFC 6587 octet count, as a capture keeps it
		},
	} {
		s := ""
		for i, l := range ls {
			s += f(i) + string(l.Raw) + "\n"
		}
		if !copyVerifies(t, home, []byte(s)) {
			t.Errorf("refused: %q", f(0))
		}
	}
}
