package siem

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/audit"
)

func rt16Lines(t *testing.T, home string, n int) []audit.Line {
	t.Helper()
	lines, _, err := audit.ReadAfter(home, 0, n)
	if err != nil || len(lines) != n {
		t.Fatal(len(lines), err)
	}
	return lines
}

// copyVerifies says whether a receiver's copy parses and verifies against
// the log under home; a copy refused at parsing does not.
func copyVerifies(t *testing.T, home string, copyBytes []byte) bool {
	t.Helper()
	evs, err := ParseCopy(copyBytes)
	if err != nil {
		return false
	}
	rep, err := audit.CheckStream(home, evs)
	if err != nil {
		t.Fatal(err)
	}
	return rep.OK()
}

func jsonString(t *testing.T, b []byte) string {
	t.Helper()
	s, err := json.Marshal(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

// TestAttackOTLPCopyAmbiguousBodyVerifies: someone with write access to
// the receiver's store rewrites event 2 as the SIEM shows it, and keeps
// the real event where only encoding/json looks: a case variant "Body"
// member after "body" (Go matches field names case-insensitively, last
// wins; a case-sensitive reader - jq, Python, the collector's own pdata -
// sees "body"), or a second "stringValue" (last wins in Go, first in
// others). otlpBodies uses json.Unmarshal into a struct, so the check
// reads the real event while every other reader reads the fake one, and
// `audit verify --stream` says the copy is faithful.
func TestAttackOTLPCopyAmbiguousBodyVerifies(t *testing.T) {
	t.Parallel()
	home, _ := newLog(t, 3)
	ls := rt16Lines(t, home, 3)
	fake := bytes.Replace(ls[1].Raw, []byte(`"outcome":"allowed"`), []byte(`"outcome":"refused"`), 1)
	for _, c := range []struct{ name, rec2 string }{
		{"case-variant Body", `{"body":{"stringValue":` + jsonString(t, fake) + `},"Body":{"stringValue":` + jsonString(t, ls[1].Raw) + `}}`},
		{"duplicate stringValue", `{"body":{"stringValue":` + jsonString(t, fake) + `,"stringValue":` + jsonString(t, ls[1].Raw) + `}}`},
	} {
		line := `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":` + jsonString(t, ls[0].Raw) + `}},` +
			c.rec2 + `,{"body":{"stringValue":` + jsonString(t, ls[2].Raw) + `}}]}]}]}`
		// What a case-sensitive, first-wins reader sees as record 2's body.
		var doc map[string]any
		if err := json.Unmarshal([]byte(c.rec2), &doc); err != nil {
			t.Fatal(err)
		}
		if copyVerifies(t, home, []byte(line+"\n")) {
			t.Errorf("%s: a copy whose record 2 is ambiguous (another reader sees %q) verifies", c.name, "outcome refused")
		}
	}
}

// TestAttackTruncatedBatchEnvelopeIgnored: the receiver's copy holds a
// webhook batch whose envelope says first 1, last 3, count 3, hash of
// event 3, but whose events array lost event 3 (dropped on the way or at
// the receiver). The batch itself proves the gap, but batchEvents reads
// only "events": without --sink the copy verifies. Likewise an envelope
// whose prev/hash match nothing.
func TestAttackTruncatedBatchEnvelopeIgnored(t *testing.T) {
	t.Parallel()
	home, _ := newLog(t, 3)
	ls := rt16Lines(t, home, 3)
	body := encodeBatch("hook", ls)
	truncated := bytes.Replace(body, append([]byte(","), ls[2].Raw...), nil, 1)
	if bytes.Equal(truncated, body) {
		t.Fatal("test setup: event 3 not removed")
	}
	bogus := encodeBatch("hook", ls[:2])
	bogus = bytes.Replace(bogus, []byte(ls[1].Hash), bytes.Repeat([]byte("0"), 64), 1)
	for _, c := range []struct {
		name string
		copy []byte
	}{{"truncated", truncated}, {"wrong envelope hash", bogus}} {
		if copyVerifies(t, home, append(c.copy, '\n')) {
			t.Errorf("%s batch (envelope and events disagree) verifies", c.name)
		}
	}
}

// TestAttackSyslogHeaderRewriteVerifies: the receiver's stored syslog
// line for a refusal has its PRI lowered from notice to informational,
// its MSGID changed and its structured data seq/hash rewritten. SIEM rules
// key on these; ParseCopy keeps only the text from the first {"v":1,"seq":
// on, so the copy verifies.
func TestAttackSyslogHeaderRewriteVerifies(t *testing.T) {
	t.Parallel()
	home, _ := newLog(t, 1) // event 1 is a refusal (i%7 == 0)
	ls := rt16Lines(t, home, 1)
	line := `<134>1 - host mcpseal 1 list [mcpseal@32473 seq="77" prev="x" hash="y"] ` + string(ls[0].Raw)
	if copyVerifies(t, home, []byte(line+"\n")) {
		t.Errorf("a syslog line whose PRI, MSGID and structured data disagree with its event verifies")
	}
}

// TestAttackSpoolFullStaleWhileSendHangs: spool_events 5, audit.required.
// The sink accepts the TCP connection and never answers (a blackholed or
// overloaded receiver). The shipper is inside send for up to sendTimeout
// (10 s), then backs off up to maxBackoff (30 s in production), and
// checkSpool only runs between those: Full() - what the call hook reads -
// stays false while the backlog is ten times the spool, so calls keep
// being forwarded for up to ~40 s per cycle with the spool over its bound.
func TestAttackSpoolFullStaleWhileSendHangs(t *testing.T) {
	t.Parallel()
	home, lg := newLog(t, 1)
	url, hung := hungWebhook(t)
	ex, err := Start(home, webhookConfig(url, 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	<-hung // the first batch is in flight and will not be answered
	appendEvents(t, lg, 50)
	ex.Appended(50) // as the audit sink says it, after each write
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if ex.Full() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("51 events wait for a sink whose spool holds 5; Full() still false after 3 s (backlog %s)", strconv.FormatInt(ex.Backlog()["hook"], 10))
}

// TestSyslogCopyAsSentVerifies: the messages mcpseal sends, stored as an
// RFC 5424 receiver keeps them (or with the timestamp and host rewritten,
// or in a traditional format that drops the header), verify; the header
// checks of TestAttackSyslogHeaderRewriteVerifies refuse only what
// disagrees with the event.
func TestSyslogCopyAsSentVerifies(t *testing.T) {
	t.Parallel()
	home, _ := newLog(t, 9) // events 1 and 8 are refusals: notice
	ls := rt16Lines(t, home, 9)
	s := &syslog{host: "gate-1", pid: "4242"}
	var copyBytes []byte
	for i, l := range ls {
		m := s.message(l)
		switch i % 3 {
		case 1: // the receiver's own timestamp and host
			f := bytes.SplitN(m, []byte(" "), 4)
			m = bytes.Join([][]byte{f[0], []byte("2026-12-02T00:00:00Z"), []byte("relay-9"), f[3]}, []byte(" "))
		case 2: // a traditional file format: no PRI, no structured data
			m = append([]byte("Dec  2 16:00:00 gate-1 mcpseal[4242]: "), l.Raw...)
		}
		copyBytes = append(append(copyBytes, m...), '\n')
	}
	evs, err := ParseCopy(copyBytes)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := audit.CheckStream(home, evs)
	if err != nil || !rep.OK() || rep.Events != 9 {
		t.Fatalf("a copy as sent: %+v, %v", rep, err)
	}
	// The priority alone lowered: refused.
	m := s.message(ls[0])
	if !bytes.HasPrefix(m, []byte("<133>1 ")) {
		t.Fatalf("setup: a refusal is not local0.notice: %s", m[:8])
	}
	if _, err := ParseCopy(append(append([]byte("<134>1 "), m[7:]...), '\n')); err == nil {
		t.Error("a refusal stored as informational verifies")
	}
}

// hungWebhook is a webhook receiver that takes each request and never
// answers it until the test ends; hung is closed at its first request.
func hungWebhook(t *testing.T) (url string, hung <-chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	first := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(first) })
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv.URL, first
}

// TestBareAuditLinesVerify: a copy of audit lines as chained, one a line
// (what a receiver of the fleet's webhook stores as events), verifies:
// an empty prefix is no syslog message to check (the fifth red team's
// syslog fixes refused it at first).
func TestBareAuditLinesVerify(t *testing.T) {
	t.Parallel()
	home, _ := newLog(t, 4)
	ls := rt16Lines(t, home, 4)
	var b []byte
	for _, l := range ls {
		b = append(append(b, l.Raw...), '\n')
	}
	if !copyVerifies(t, home, b) {
		t.Error("bare audit lines do not verify")
	}
}
