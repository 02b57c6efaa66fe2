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
