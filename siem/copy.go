package siem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// A receiver's copy, as `mcpseal audit verify --stream FILE` reads it, is
// text with one record a line, in the order received, in any of the forms
// mcpseal sends:
//
//   - an audit line as chained ({"v":1,"seq":...});
//   - a webhook batch body ({"v":1,"type":"mcpseal-audit-batch",...}):
//     its events;
//   - a syslog message as a receiver stores it: the audit line is its
//     message, after the structured data;
//   - an OTLP logs export in the OTLP JSON encoding, as the OpenTelemetry
//     Collector's file exporter writes it ({"resourceLogs":...}): the
//     string body of each log record.
//
// Blank lines are skipped; anything else is an error naming the line.
// The copy is the receiver's and may be anyone's: nothing of it is echoed.

// maxCopyLine bounds one line of a copy: a whole webhook batch (256
// events of at most 8 KiB, and its envelope).
const maxCopyLine = 256*8<<10 + 4096

var (
	otlpPrefix  = []byte(`{"resourceLogs":`)
	batchPrefix = []byte(`{"v":1,"type":"` + BatchType + `"`)
	eventPrefix = []byte(`{"v":1,"seq":`)
)

// ParseCopy returns the audit lines of a receiver's copy, in order.
func ParseCopy(data []byte) ([][]byte, error) {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxCopyLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if bytes.HasPrefix(line, otlpPrefix) {
			evs, err := otlpBodies(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			out = append(out, evs...)
			continue
		}
		if bytes.HasPrefix(line, batchPrefix) {
			evs, err := batchEvents(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			out = append(out, evs...)
			continue
		}
		i := bytes.Index(line, eventPrefix)
		if i < 0 {
			return nil, fmt.Errorf("line %d: not an audit event, a batch or a syslog message carrying one", n)
		}
		if err := checkSyslogHeader(line[:i], line[i:]); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, bytes.Clone(line[i:]))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	return out, nil
}

// batchEvents returns a webhook batch's events, once its envelope agrees
// with them: their seqs run from first to last without a gap or a
// repeat, count is their number, prev is the first event's prev and hash
// the last one's line hash. A batch that lost an event, or whose envelope
// was rewritten, proves a gap or a rewrite by itself.
func batchEvents(line []byte) ([][]byte, error) {
	var v [6][]byte
	if jsonrpc.LookupStrict(line, []string{"events", "count", "first", "last", "prev", "hash"}, v[:]) != nil {
		return nil, errors.New("a batch that is not one unambiguous JSON object")
	}
	if len(v[0]) == 0 || v[0][0] != '[' {
		return nil, errors.New("a batch without an events array")
	}
	els, err := jsonrpc.Elements(v[0])
	if err != nil || len(els) == 0 {
		return nil, errors.New("a batch whose events do not parse")
	}
	count, errC := strconv.ParseInt(string(v[1]), 10, 64)
	first, errF := strconv.ParseInt(string(v[2]), 10, 64)
	last, errL := strconv.ParseInt(string(v[3]), 10, 64)
	prev, errP := jsonrpc.DecodeString(v[4])
	hash, errH := jsonrpc.DecodeString(v[5])
	if errors.Join(errC, errF, errL, errP, errH) != nil {
		return nil, errors.New("a batch whose envelope lacks its count, first, last, prev or hash")
	}
	// mcpseal sends consecutive events of the chain, the first's prev
	// and the last's hash in the envelope. Whether each event is the
	// chain's is CheckStream's to say, event by event (a rewrite there
	// names its seq); here only what the batch says of itself.
	disagrees := errors.New("a batch whose envelope disagrees with its events: an event was lost or the batch rewritten")
	var lastHash string
	for i, e := range els {
		seq, p, h, err := eventPosition(e)
		if err != nil {
			return nil, errors.New("a batch whose events are not audit events")
		}
		if seq != first+int64(i) || i == 0 && p != prev {
			return nil, disagrees
		}
		lastHash = h
	}
	if count != int64(len(els)) || last != first+count-1 || hash != lastHash {
		return nil, disagrees
	}
	out := make([][]byte, len(els))
	for i, e := range els {
		out[i] = bytes.Clone(e)
	}
	return out, nil
}

// eventPosition reads an audit event's chain position: its seq, prev,
// and the hash of its line (audit.LineHash).
func eventPosition(ev []byte) (seq int64, prev, hash string, err error) {
	var v [2][]byte
	if err := jsonrpc.LookupStrict(ev, []string{"seq", "prev"}, v[:]); err != nil {
		return 0, "", "", err
	}
	seq, errS := strconv.ParseInt(string(v[0]), 10, 64)
	prev, errP := jsonrpc.DecodeString(v[1])
	return seq, prev, audit.LineHash(ev), errors.Join(errS, errP)
}

// otlpBodies returns the string bodies of the log records of one OTLP
// JSON logs export, in order. Every level is read strictly: a member
// named twice, or beside a name a lenient reader takes for it (another
// case, the proto field name: "string_value" for "stringValue",
// "log_records" for "logRecords"), is refused, since readers differ on
// which copy they take and the check must read what the SIEM shows. A
// body is a oneof: only a stringValue, alone. What the record says of its
// event beside the body (severity, the mcpseal.audit.* attributes), when
// the receiver kept it, must be what mcpseal sent for that event.
func otlpBodies(line []byte) ([][]byte, error) {
	bad := errors.New("an OTLP logs export that is not one unambiguous JSON document")
	var out [][]byte
	err := eachOf(line, "resourceLogs", func(rl []byte) error {
		return eachOf(rl, "scopeLogs", func(sl []byte) error {
			return eachOf(sl, "logRecords", func(r []byte) error {
				ev, err := otlpRecord(r)
				if err != nil {
					return err
				}
				out = append(out, ev)
				return nil
			})
		})
	})
	if err != nil {
		if errors.Is(err, errAmbiguous) {
			return nil, bad
		}
		return nil, err
	}
	return out, nil
}

// otlpRecord returns one log record's event, checked against what the
// record says of it.
func otlpRecord(r []byte) ([]byte, error) {
	var v [4][]byte
	if jsonrpc.LookupUnaliased(r, []string{"body", "severityNumber", "severityText", "attributes"}, v[:]) != nil {
		return nil, errAmbiguous
	}
	noBody := errors.New("an OTLP log record without a string body")
	if v[0] == nil {
		return nil, noBody
	}
	ms, err := jsonrpc.Members(v[0])
	if err != nil || len(ms) != 1 || ms[0].Key != "stringValue" {
		return nil, noBody
	}
	text, err := jsonrpc.DecodeString(ms[0].Value)
	if err != nil {
		return nil, noBody
	}
	ev := []byte(text)
	// The severity number as a number (the collector's file exporter) or
	// by its enum name (protojson).
	sev, sevName, sevText := "9", `"SEVERITY_NUMBER_INFO"`, "INFO"
	if severity(audit.Line{Raw: ev}) == sevNotice {
		sev, sevName, sevText = "13", `"SEVERITY_NUMBER_WARN"`, "WARN"
	}
	disagrees := errors.New("an OTLP log record whose severity or mcpseal.audit attributes disagree with its event")
	if v[1] != nil && string(v[1]) != sev && string(v[1]) != sevName {
		return nil, disagrees
	}
	if v[2] != nil && string(v[2]) != `"`+sevText+`"` {
		return nil, disagrees
	}
	if v[3] != nil {
		seq, prev, hash, err := eventPosition(ev)
		if err != nil {
			return nil, errors.New("an OTLP log record whose body is not an audit event")
		}
		want := map[string]string{"mcpseal.audit.seq": strconv.FormatInt(seq, 10), "mcpseal.audit.prev": prev, "mcpseal.audit.hash": hash}
		seen := map[string]bool{}
		err = eachElement(v[3], func(kv []byte) error {
			var f [2][]byte
			if jsonrpc.LookupUnaliased(kv, []string{"key", "value"}, f[:]) != nil || f[0] == nil {
				return errAmbiguous
			}
			key, err := jsonrpc.DecodeString(f[0])
			if err != nil || seen[key] {
				return errAmbiguous // a key twice: readers differ on which they keep
			}
			seen[key] = true
			w, ours := want[key]
			if !ours {
				return nil
			}
			got, ok := anyValueText(f[1])
			if !ok || got != w {
				return disagrees
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// anyValueText is an OTLP AnyValue holding one stringValue or intValue
// (an int64 is a JSON string in OTLP JSON, a number in some writers), as
// text.
func anyValueText(v []byte) (string, bool) {
	ms, err := jsonrpc.Members(v)
	if err != nil || len(ms) != 1 {
		return "", false
	}
	switch raw := ms[0].Value; ms[0].Key {
	case "stringValue":
		s, err := jsonrpc.DecodeString(raw)
		return s, err == nil
	case "intValue":
		if len(raw) > 0 && raw[0] == '"' {
			s, err := jsonrpc.DecodeString(raw)
			return s, err == nil
		}
		return string(raw), true
	}
	return "", false
}

var errAmbiguous = errors.New("ambiguous")

// strictMember is obj's member name (nil when absent); obj must be one
// unambiguous object, with no member a lenient reader takes for name
// (jsonrpc.LookupUnaliased).
func strictMember(obj []byte, name string) ([]byte, error) {
	var v [1][]byte
	if jsonrpc.LookupUnaliased(obj, []string{name}, v[:]) != nil {
		return nil, errAmbiguous
	}
	return v[0], nil
}

// eachOf calls f with each element of obj's array member name; an absent
// member has none, one that is not an array is refused.
func eachOf(obj []byte, name string, f func([]byte) error) error {
	arr, err := strictMember(obj, name)
	if err != nil || arr == nil {
		return err
	}
	return eachElement(arr, f)
}

// eachElement calls f with each element of the JSON array arr.
func eachElement(arr []byte, f func([]byte) error) error {
	if len(arr) == 0 || arr[0] != '[' {
		return errAmbiguous
	}
	els, err := jsonrpc.Elements(arr)
	if err != nil {
		return errAmbiguous
	}
	for _, e := range els {
		if err := f(e); err != nil {
			return err
		}
	}
	return nil
}

// checkSyslogHeader checks what a stored syslog message says of its event
// against the event. A message kept with its RFC 5424 header (after a BOM
// or an RFC 6587 octet count a capture may keep) must be one: the
// priority and MSGID (the op) the event's, mcpseal's structured data
// element exactly the event's position (seq, prev, hash) and no other
// element named like it (a relay may add elements of its own), and the
// event right after the structured data, nothing put between. Timestamp,
// host and process id are the receiver's to rewrite and are not read. A
// receiver that stores only the message (a traditional file format)
// leaves nothing to check but this: mcpseal's element, if it is there,
// is the event's.
func checkSyslogHeader(prefix, ev []byte) error {
	seq, prev, hash, err := eventPosition(ev)
	if err != nil {
		return errors.New("a syslog message whose event is not an audit event")
	}
	ours := fmt.Sprintf(`[%s seq="%d" prev="%s" hash="%s"]`, sdID, seq, prev, hash)
	h := bytes.TrimPrefix(prefix, []byte("\ufeff"))
	if i := bytes.IndexByte(h, ' '); i > 0 && i < len(h)-1 && h[i+1] == '<' && allDigits(h[:i]) {
		h = h[i+1:] // an octet count
	}
	if len(h) == 0 || h[0] != '<' {
		if bytes.Contains(prefix, []byte(sdID)) && bytes.Count(prefix, []byte(sdID)) != 1 || bytes.Contains(prefix, []byte(sdID)) && !bytes.Contains(prefix, []byte(ours)) {
			return errors.New("a syslog message whose structured data disagrees with its event")
		}
		return nil
	}
	bad := errors.New("a syslog message whose header disagrees with its event")
	f := bytes.SplitN(h, []byte(" "), 7) // <PRI>1 TS HOST APP PROCID MSGID SD...
	if len(f) != 7 {
		return bad
	}
	pri := strconv.Itoa(facilityLocal0*8 + severity(audit.Line{Raw: ev}))
	if string(f[0]) != "<"+pri+">1" || string(f[5]) != printUS(lineMember(ev, "op"), 32) {
		return bad
	}
	rest := f[6]
	found := false
	for len(rest) > 0 && rest[0] == '[' {
		n := sdElementLen(rest)
		if n < 0 {
			return bad
		}
		el := rest[:n]
		id := el[1:]
		if i := bytes.IndexAny(id, " ]"); i >= 0 {
			id = id[:i]
		}
		switch {
		case string(el) == ours && !found:
			found = true
		case bytes.Contains(bytes.ToLower(id), []byte("mcpseal")):
			return bad // a second element of ours, or one named like it
		}
		rest = rest[n:]
	}
	if !found {
		return bad
	}
	if string(rest) != " " && string(rest) != " \ufeff" {
		return bad // text between the structured data and the event
	}
	return nil
}

// sdElementLen is the length of the RFC 5424 SD-ELEMENT b starts with
// ("[" ... "]", '"', '\' and ']' escaped inside a quoted value), -1 when
// it does not end.
func sdElementLen(b []byte) int {
	quoted := false
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == ']':
			return i + 1
		}
	}
	return -1
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}
