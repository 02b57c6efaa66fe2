package siem

// Tenth red team of the copy checks (issue 16), against 4855757.

import (
	"strconv"
	"strings"
	"testing"
)

// TestAttackSyslogHostGrokLabelRules: isHost now claims to be "what
// rsyslog and grok both read as one", but checks only the character set
// and the first/last byte. Logstash grok's HOSTNAME (logstash-patterns-core,
// seen in the stored pattern files):
// \b(?:[0-9A-Za-z][0-9A-Za-z-]{0,62})(?:\.(?:[0-9A-Za-z][0-9A-Za-z-]{0,62}))*(\.?|\b)
// limits each label to 63 bytes and needs a letter or digit after every
// '.'. A 64-byte label, "a..b" or "a.-b" is not matched by SYSLOGHOST or
// IPORHOST, so SYSLOGLINE and SYSLOG5424LINE fail (_grokparsefailure: no
// program, severity or message field) while rsyslog reads a host.
// Parser: Logstash grok. Confidence: high (pattern text); impact the same
// class as redteam9's TestAttackSyslogHostGrokDoesNotMatch (unparsed
// event, not a chosen app).
func TestAttackSyslogHostGrokLabelRules(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	pri := "<" + strconv.Itoa(facilityLocal0*8+severity(l)) + ">"
	long := strings.Repeat("a", 64) + ".example"
	checkPrefixes(t, home, l.Raw, false, "verifies with a host grok's HOSTNAME does not match",
		"Dec  2 16:54:59 "+long+" mcpseal: ",
		pri+"2026-12-02T16:54:59Z "+long+" mcpseal[1]: ",
		"Dec  2 16:54:59 gate..example mcpseal: ",
		"Dec  2 16:54:59 gate.-x mcpseal[1]: ",
		rt17Header(l, "-", long, "1"),
		rt17Header(l, "-", "gate..example", "1"),
		rt17Header(l, "-", "gate.-x", "1"),
	)
}

// TestSyslogHostParsersCannotReadIsSentAsNil: mcpseal's sink sent
// HOSTNAME printUS(os.Hostname(), 255), so a machine named "build_box"
// or "host.example." got its own faithful copy refused once the check
// took only hosts parsers read (grok's HOSTNAME matches neither). Such a
// name is now sent as NILVALUE, whose copies verify; a copy that names
// it is still refused.
func TestSyslogHostParsersCannotReadIsSentAsNil(t *testing.T) {
	home, _ := newLog(t, 1)
	l := rt16Lines(t, home, 1)[0]
	for _, h := range []string{"build_box", "host.example.", ""} {
		if got := syslogHost(h); got != "-" {
			t.Errorf("host %q is sent as %q, want -", h, got)
		}
		s := &syslog{host: syslogHost(h), pid: "4242"}
		if !rt16bVerifies(t, home, string(s.message(l))) {
			t.Errorf("mcpseal's own message from host %q is refused", h)
		}
	}
	for _, h := range []string{"gate-1", "gate.example.com", "::1"} {
		if got := syslogHost(h); got != h {
			t.Errorf("host %q is sent as %q", h, got)
		}
	}
	checkPrefixes(t, home, l.Raw, false, "a header naming a host grok does not read verifies",
		rt17Header(l, "2026-12-02T16:54:59.123Z", "build_box", "4242"),
		rt17Header(l, "2026-12-02T16:54:59.123Z", "host.example.", "4242"),
	)
}
