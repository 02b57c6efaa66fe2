package siem

import (
	"bytes"
	"testing"
)

// TestAttackSyslogStructuredDataDroppedOrRespelled: the RFC 5424 header
// is kept (PRI and MSGID are checked), but checkSyslogHeader checks the
// structured data only when it finds "[mcpseal@32473 " (one space). An
// SD element spelt with a tab (read by lenient SD parsers / regexes with
// \s), an SD of NILVALUE plus text inserted in MSG before the event, or
// another SD-ID carrying a fake seq, all verify: mcpseal always sends
// the SD element, so its absence beside a 5424 header is a rewrite.
func TestAttackSyslogStructuredDataDroppedOrRespelled(t *testing.T) {
	home, _ := newLog(t, 2)
	ls := rt16Lines(t, home, 2)
	s := &syslog{host: "gate-1", pid: "4242"}
	m := s.message(ls[1]) // an allowed call: <134>1
	i := bytes.Index(m, []byte("[mcpseal@32473 "))
	hdr := string(m[:i]) // "<134>1 ts host mcpseal pid op "
	ev := string(ls[1].Raw)
	for _, c := range []struct{ name, line string }{
		{"tab after SD-ID, fake seq", hdr + "[mcpseal@32473\tseq=\"77\" prev=\"x\" hash=\"y\"] " + ev},
		{"SD NILVALUE and text before the event", hdr + "- DENIED by policy; ignore: " + ev},
		{"other SD-ID with fake seq", hdr + "[mcpseal seq=\"77\" prev=\"x\" hash=\"y\"] " + ev},
	} {
		// seq 1 is needed for a gapless copy: send it as it was sent.
		copyText := string(s.message(ls[0])) + "\n" + c.line
		if rt16bVerifies(t, home, copyText) {
			t.Errorf("%s: a 5424 message without mcpseal's structured data verifies: %q", c.name, c.line[:min(len(c.line), 140)])
		}
	}
}

// TestAttackSyslogHeaderSkippedAfterLeadingToken: the PRI/MSGID check runs
// only when the first field is "<PRI>1". A stored line with anything
// before it - an RFC 6587 octet count as a raw TCP capture keeps it, a
// receiver's timestamp, a BOM - is "not an RFC 5424 header", so the PRI
// of a refusal can be lowered to informational and the MSGID changed,
// while a SIEM that parses the 5424 message after the frame sees them.
func TestAttackSyslogHeaderSkippedAfterLeadingToken(t *testing.T) {
	home, _ := newLog(t, 1) // a refusal: <133>1
	ls := rt16Lines(t, home, 1)
	s := &syslog{host: "gate-1", pid: "4242"}
	m := s.message(ls[0])
	if !bytes.HasPrefix(m, []byte("<133>1 ")) {
		t.Fatal("setup")
	}
	f := bytes.SplitN(m, []byte(" "), 7) // pri ts host app pid msgid rest
	lowered := "<134>1 " + string(f[1]) + " " + string(f[2]) + " " + string(f[3]) + " " + string(f[4]) + " list " + string(f[6])
	for _, c := range []struct{ name, line string }{
		{"octet count", "999 " + lowered},
		{"BOM", "\ufeff" + lowered},
	} {
		if rt16bVerifies(t, home, c.line) {
			t.Errorf("%s: a refusal stored as local0.info with MSGID list verifies", c.name)
		}
	}
}

// TestSyslogRelayAddedSDElement: RFC 5424 lets an originator or relay
// carry more SD elements (origin, meta); one added after mcpseal's makes
// a faithful copy fail, one added before verifies.
func TestSyslogRelayAddedSDElement(t *testing.T) {
	home, _ := newLog(t, 1)
	ls := rt16Lines(t, home, 1)
	s := &syslog{host: "gate-1", pid: "4242"}
	m := string(s.message(ls[0]))
	i := bytes.Index([]byte(m), []byte("] {"))
	after := m[:i+1] + `[origin ip="10.0.0.9"]` + m[i+1:]
	if !rt16bVerifies(t, home, after) {
		t.Errorf("a faithful message with a relay's [origin] after mcpseal's SD element is refused")
	}
}
