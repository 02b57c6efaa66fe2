package audit

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// encodeSeeds are events of every kind a session writes, and a few that
// must take encoding/json's path (escapes, an anchor, odd times).
func encodeSeeds() []Event {
	t := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	d := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	return []Event{
		{V: 1, Seq: 1, Time: t, Op: OpCall, Outcome: Allowed, Server: "0123456789abcdef", Label: "memory", Tool: "read_graph", Digest: d, Bytes: 42, Prev: d},
		{V: 1, Seq: 7, Time: t.Truncate(time.Second), Op: OpList, Outcome: Allowed, Count: 40, Prev: d},
		{V: 1, Seq: 9, Time: t, Op: OpConfirm, Outcome: Declined, Code: "confirm-declined", Stage: "before_tool_call", Provider: "builtin", Receipt: d, Millis: 3, Prev: d},
		{V: 1, Seq: 2, Time: t, Op: OpGap, Outcome: Noted, Code: "head-ahead", Count: 5, Contract: d, Prev: d},
		{V: 1, Seq: 3, Time: t, Op: OpPrune, Outcome: Noted, Anchor: &Anchor{Seq: 2, Hash: d}, Prev: d},
		{V: 1, Seq: 4, Time: t, Op: OpCall, Outcome: Refused, Label: "a \"quoted\" \\ label\n\u2028é", Prev: d},
		{V: 1, Seq: 5, Time: time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC), Op: OpCall, Outcome: Allowed, Prev: d},
		{V: 1, Seq: 6, Time: time.Time{}, Op: "", Outcome: "", Prev: ""},
		{V: 1, Seq: 8, Time: t, Op: OpCall, Outcome: Allowed, Tool: "echo", Subject: "alice@example.com", Client: "cli-1", JTI: d, Prev: d},
		{V: 1, Seq: 10, Time: t, Op: OpCall, Outcome: Refused, Subject: "\"bob\"", Prev: d},
	}
}

func TestEncodeMatchesEncodingJSON(t *testing.T) {
	for i, e := range encodeSeeds() {
		checkEncode(t, i, e)
	}
}

func FuzzEncode(f *testing.F) {
	for _, e := range encodeSeeds() {
		f.Add(e.Seq, e.Time.UnixNano(), string(e.Op), string(e.Outcome), e.Label, e.Tool, e.Code, e.Count, e.Bytes, e.Millis)
	}
	f.Fuzz(func(t *testing.T, seq, nanos int64, op, outcome, label, tool, code string, count, size, ms int64) {
		e := Event{V: 1, Seq: seq, Time: time.Unix(0, nanos).UTC(), Op: Op(op), Outcome: Outcome(outcome),
			Label: label, Tool: tool, Code: code, Count: count, Bytes: size, Millis: ms, Prev: "p"}
		checkEncode(t, 0, e)
	})
}

func checkEncode(t *testing.T, i int, e Event) {
	t.Helper()
	want, werr := encodeJSON(&e)
	got, gerr := encode(&e)
	if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("event %d: encode = %s (%v), encoding/json = %s (%v)", i, got, gerr, want, werr)
	}
}

func TestSubjectIsReducedAndJTIMustBeADigest(t *testing.T) {
	e, err := prepare(Event{Op: OpCall, Outcome: Allowed, Subject: "al\u202eice\n<b>", Client: "c li"}, 1, zeroHash)
	if err != nil {
		t.Fatal(err)
	}
	// Reduced, with a digest of the value as sent: "c li" and "c_li" are
	// two callers.
	if !strings.HasPrefix(e.Subject, "al_ice__b_~") || !strings.HasPrefix(e.Client, "c_li~") || len(e.Client) != len("c_li~")+12 {
		t.Fatalf("subject %q client %q", e.Subject, e.Client)
	}
	if same, _ := prepare(Event{Op: OpCall, Outcome: Allowed, Client: "c_li"}, 1, zeroHash); same.Client != "c_li" {
		t.Fatalf("a client id already in the safe set was changed: %q", same.Client)
	}
	if _, err := prepare(Event{Op: OpCall, Outcome: Allowed, JTI: "the-raw-jti"}, 1, zeroHash); err == nil {
		t.Fatal("a jti that is not a digest was accepted")
	}
}

// TestWordChecksAreTheirByteRules: plainString and isHex, which read
// eight bytes at a time, agree with their byte rules for every byte value
// at every place of strings one to seventeen bytes long.
func TestWordChecksAreTheirByteRules(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 17; n++ {
		for pos := range n {
			for c := range 256 {
				b := []byte(strings.Repeat("a", n))
				b[pos] = byte(c)
				checkWordRules(t, string(b))
				b[(pos+1)%n] = byte(255 - c) // a second odd byte: borrows and carries between them
				checkWordRules(t, string(b))
			}
		}
	}
}

func FuzzWordChecks(f *testing.F) {
	for _, s := range []string{"", "0123456789abcdef", "0123456789abcdeF", "\x7f\x00\x1f\x20\"\\", "é", "abcdefgh/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkWordRules(t, s) })
}

func checkWordRules(t *testing.T, s string) {
	t.Helper()
	plain, hexOK := true, true
	for i := 0; i < len(s); i++ {
		plain = plain && plainByte(s[i])
		hexOK = hexOK && hexByte(s[i])
	}
	if plainString(s) != plain {
		t.Fatalf("plainString(%q) = %v, its byte rule %v", s, !plain, plain)
	}
	if isHex(s, len(s)) != hexOK {
		t.Fatalf("isHex(%q) = %v, its byte rule %v", s, !hexOK, hexOK)
	}
}

// TestByteRulesAreEncodingJSONs: what plainByte takes encoding/json
// writes unescaped (with SetEscapeHTML off; DEL too, which plainByte
// leaves to encoding/json itself), and hexByte is lowercase hex.
func TestByteRulesAreEncodingJSONs(t *testing.T) {
	t.Parallel()
	for c := range 128 {
		e := Event{V: 1, Seq: 1, Op: OpCall, Outcome: Allowed, Label: string(rune(c)), Prev: "p"}
		line, err := encodeJSON(&e)
		if err != nil {
			t.Fatal(err)
		}
		if unescaped := bytes.Contains(line, []byte(`"label":"`+string(rune(c))+`"`)); plainByte(byte(c)) && !unescaped || !plainByte(byte(c)) && unescaped != (c == 0x7f) {
			t.Errorf("byte %#x: encoding/json writes it unescaped: %v, plainByte %v", c, unescaped, plainByte(byte(c)))
		}
		if want := strings.IndexByte("0123456789abcdef", byte(c)) >= 0; hexByte(byte(c)) != want {
			t.Errorf("hexByte(%#x) = %v", c, !want)
		}
	}
}

// checkSeen prepares and encodes first, then then, with one seen, and
// then alone: the two must come out the same, error for error and byte
// for byte.
func checkSeen(t *testing.T, first, then Event) {
	t.Helper()
	var sn seen
	if p, err := prepareSeen(first, 3, zeroHash, &sn); err == nil {
		_, _ = encodeTo(nil, &p, &sn)
	}
	p1, err1 := prepareSeen(then, 4, zeroHash, &sn)
	p2, err2 := prepare(then, 4, zeroHash)
	if (err1 == nil) != (err2 == nil) || p1 != p2 {
		t.Fatalf("after %+v: prepare(%+v) = %+v, %v; without memory %+v, %v", first, then, p1, err1, p2, err2)
	}
	if err1 != nil {
		return
	}
	l1, e1 := encodeTo(nil, &p1, &sn)
	l2, e2 := encodeTo(nil, &p2, nil)
	if (e1 == nil) != (e2 == nil) || !bytes.Equal(l1, l2) {
		t.Fatalf("after %+v: line %s, %v; without memory %s, %v", first, l1, e1, l2, e2)
	}
}

// TestSeenChangesNothing: what a Log remembers of the events before never
// changes how the next is checked, reduced or written.
func TestSeenChangesNothing(t *testing.T) {
	t.Parallel()
	seeds := encodeSeeds()
	d := seeds[0].Digest
	odd := []func(*Event){
		func(e *Event) { e.Digest = strings.ToUpper(d) },
		func(e *Event) { e.Server = "0123456789ABCDEF" },
		func(e *Event) { e.Label = e.Label + "\n" },
		func(e *Event) { e.Tool = "read graph\u202e" },
		func(e *Event) { e.Code = strings.Repeat("c", maxCodeLen+1) },
		func(e *Event) { e.Subject = "alice smith" },
		func(e *Event) { e.Contract = d[:63] + "g" },
		func(e *Event) { e.Label = "" },
	}
	for _, first := range seeds {
		for _, then := range seeds {
			checkSeen(t, first, then)
			for _, f := range odd {
				e := first
				f(&e)
				checkSeen(t, first, e)
				checkSeen(t, e, first)
			}
		}
	}
}

func FuzzSeen(f *testing.F) {
	for _, e := range encodeSeeds() {
		f.Add(e.Label, e.Tool, e.Code, e.Digest, e.Server, e.Subject, "memory", "echo", "", e.Digest, e.Server, "")
	}
	f.Fuzz(func(t *testing.T, label, tool, code, digest, server, subject, label2, tool2, code2, digest2, server2, subject2 string) {
		ev := func(label, tool, code, digest, server, subject string) Event {
			return Event{Time: time.Unix(1800000000, 5).UTC(), Op: OpCall, Outcome: Allowed, Label: label, Tool: tool, Code: code, Digest: digest, Server: server, Subject: subject}
		}
		checkSeen(t, ev(label, tool, code, digest, server, subject), ev(label2, tool2, code2, digest2, server2, subject2))
	})
}

// TestWrittenSubjectIsWhatReduceSubjectWrites: a line's subject or client
// id is read back as written, and only a form ReduceSubject writes passes.
func TestWrittenSubjectIsWhatReduceSubjectWrites(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "alice", "alice smith", "a~b", "~", strings.Repeat("x", 200), "é", "al\u202eice"} {
		if w := ReduceSubject(s); !writtenSubject(w) {
			t.Errorf("ReduceSubject(%q) = %q, not read back", s, w)
		}
	}
	for _, s := range []string{"a b", "a~", "x~ABCDEF123456", "x~12345678901", "x~1234567890123", "é~0123456789ab", strings.Repeat("x", 116) + "~0123456789ab"} {
		if writtenSubject(s) {
			t.Errorf("writtenSubject(%q) = true", s)
		}
	}
}

func FuzzWrittenSubject(f *testing.F) {
	for _, s := range []string{"alice", "a b", "a~b", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if w := ReduceSubject(s); !writtenSubject(w) {
			t.Fatalf("ReduceSubject(%q) = %q, not read back", s, w)
		}
	})
}
