package siem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

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
// events of at most 8 KiB, and its envelope) fits, and so does a
// Collector's file export of a merged batch (its batch processor sends
// 8,192 records by default: about 7 MiB of mcpseal's).
const maxCopyLine = 16 << 20

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
// JSON logs export, in order. It is read as OTLP's JSON encoding defines
// it and nothing else: at every level only the members OTLP names there,
// each once, exactly as spelled (a case variant, a proto field name such
// as "string_value", or an older container such as
// "instrumentationLibraryLogs" is refused, since readers differ on what
// they take from them and the check must read what the SIEM shows). A
// record must say of its event what mcpseal sent: the severity and the
// mcpseal.audit.seq, prev and hash attributes, in the record's own
// attributes only; its body is a stringValue alone.
func otlpBodies(line []byte) ([][]byte, error) {
	var out [][]byte
	top, err := onlyMembers(line, "resourceLogs")
	if err != nil {
		return nil, err
	}
	err = eachElement(top["resourceLogs"], func(rl []byte) error {
		m, err := onlyMembers(rl, "resource", "scopeLogs", "schemaUrl")
		if err != nil {
			return err
		}
		if err := appIs(m["resource"], "service.name", "mcpseal", "attributes", "droppedAttributesCount"); err != nil {
			return err
		}
		return eachElement(m["scopeLogs"], func(sl []byte) error {
			m, err := onlyMembers(sl, "scope", "logRecords", "schemaUrl")
			if err != nil {
				return err
			}
			if err := appIs(m["scope"], "name", "mcpseal.audit", "name", "version", "attributes", "droppedAttributesCount"); err != nil {
				return err
			}
			return eachElement(m["logRecords"], func(r []byte) error {
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
		return nil, err
	}
	return out, nil
}

var errOTLP = errors.New("an OTLP logs export that is not one unambiguous OTLP JSON document")

// onlyMembers returns obj's members, which must be among names (each
// once, spelled exactly); an absent member is nil in the map.
func onlyMembers(obj []byte, names ...string) (map[string][]byte, error) {
	ms, err := jsonrpc.Members(obj)
	if err != nil {
		return nil, errOTLP
	}
	out := make(map[string][]byte, len(ms))
	for _, m := range ms {
		if !slices.Contains(names, m.Key) {
			return nil, errOTLP
		}
		out[m.Key] = m.Value
	}
	return out, nil
}

// appIs checks a resource or a scope, which holds only names: that it
// names mcpseal as sent (the resource's service.name attribute, the
// scope's name member: what a SIEM shows as the app), and that its
// attributes claim no mcpseal.audit key (mcpseal puts an event's position
// in the record's own attributes, and a receiver that merges the levels
// would show this one instead) nor a service name but the resource's.
// Other attributes (a Collector's resource processor adds some) are the
// receiver's.
func appIs(obj []byte, key, want string, names ...string) error {
	if obj == nil {
		return errOTLP
	}
	m, err := onlyMembers(obj, names...)
	if err != nil {
		return err
	}
	found, member := false, slices.Contains(names, key)
	if v, ok := m[key]; ok { // the scope's name
		s, err := jsonrpc.DecodeString(v)
		if err != nil || s != want {
			return errOTLP
		}
		found = true
	}
	err = eachAttribute(m["attributes"], func(k string, v []byte) error {
		switch n := labelForm(k); {
		case strings.HasPrefix(n, "mcpsealaudit"), strings.HasPrefix(n, "comsplunk"), strings.Contains(n, "severity"), reservedLabel[n]:
			return errOTLP // exporters that merge levels would show it as the record's
		case member && n == labelForm(key):
			return errOTLP // the scope's name is its member, not an attribute
		case k != key && (n == labelForm(key) || n == "servicename"):
			return errOTLP // service_name beside service.name, or a scope's: one label to a receiver that renames or merges them
		case k == key:
			if s, ok := anyValueText(v); !ok || s != want {
				return errOTLP
			}
			found = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return errOTLP
	}
	return nil
}

// reservedLabel holds keys, in labelForm, that an exporter merging a
// resource's or a scope's attributes into a record's fields writes over
// the record's own: Datadog's exporter writes them after the message, so
// a "message" there is the message Datadog shows, a "ddtags" its tags
// (and the aliases its remappers read for them). Keys starting
// com.splunk are refused too: Splunk's exporter makes them the event's
// source, sourcetype and index.
var reservedLabel = map[string]bool{
	"message": true, "msg": true, "log": true, "body": true, "ddtags": true, "ddsource": true,
	"status": true, "level": true, "service": true, "ddservice": true, "syslogappname": true,
}

// labelForm is an attribute key as receivers that make labels of keys
// may read it: folded to lower case, without '.', '_' and '-'.
func labelForm(k string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '_' || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, k)
}

// eachAttribute calls f with each KeyValue of an attributes array
// (absent: none); a key twice is refused.
func eachAttribute(arr []byte, f func(key string, value []byte) error) error {
	if arr == nil {
		return nil
	}
	seen := map[string]bool{}
	return eachElement(arr, func(kv []byte) error {
		m, err := onlyMembers(kv, "key", "value")
		if err != nil || m["key"] == nil {
			return errOTLP
		}
		key, err := jsonrpc.DecodeString(m["key"])
		if err != nil || seen[key] {
			return errOTLP // a key twice: readers differ on which they keep
		}
		seen[key] = true
		return f(key, m["value"])
	})
}

// otlpRecord returns one log record's event, checked against what the
// record says of it.
func otlpRecord(r []byte) ([]byte, error) {
	m, err := onlyMembers(r, "timeUnixNano", "observedTimeUnixNano", "severityNumber", "severityText",
		"body", "attributes", "droppedAttributesCount", "flags", "traceId", "spanId", "eventName")
	if err != nil {
		return nil, err
	}
	noBody := errors.New("an OTLP log record without a string body")
	body, err := onlyMembers(m["body"], "stringValue")
	if err != nil || body["stringValue"] == nil {
		return nil, noBody
	}
	text, err := jsonrpc.DecodeString(body["stringValue"])
	if err != nil {
		return nil, noBody
	}
	ev := []byte(text)
	// The severity number as a number (the collector's file exporter) or
	// by its enum name (protojson); mcpseal sends both fields, always.
	sev, sevName, sevText := "9", `"SEVERITY_NUMBER_INFO"`, `"INFO"`
	if severity(audit.Line{Raw: ev}) == sevNotice {
		sev, sevName, sevText = "13", `"SEVERITY_NUMBER_WARN"`, `"WARN"`
	}
	disagrees := errors.New("an OTLP log record whose severity or mcpseal.audit attributes disagree with its event")
	if n := string(m["severityNumber"]); n != sev && n != sevName || string(m["severityText"]) != sevText {
		return nil, disagrees
	}
	seq, prev, hash, err := eventPosition(ev)
	if err != nil {
		return nil, errors.New("an OTLP log record whose body is not an audit event")
	}
	want := map[string]string{"mcpseal.audit.seq": strconv.FormatInt(seq, 10), "mcpseal.audit.prev": prev, "mcpseal.audit.hash": hash}
	found := 0
	if v, ok := m["eventName"]; ok && string(v) != `"mcpseal.audit"` {
		return nil, disagrees // an older receiver may drop it, not change it
	}
	err = eachAttribute(m["attributes"], func(key string, value []byte) error {
		got, ok := anyValueText(value)
		switch w, ours := want[key]; {
		case key == "mcpseal.audit.sink":
			if !ok {
				return disagrees
			}
		case !ours || !ok || got != w:
			return disagrees // mcpseal sends its four attributes, no other
		default:
			found++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found != len(want) {
		return nil, disagrees
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

// eachElement calls f with each element of the JSON array arr (absent:
// none).
func eachElement(arr []byte, f func([]byte) error) error {
	if arr == nil {
		return nil
	}
	if arr[0] != '[' {
		return errOTLP
	}
	els, err := jsonrpc.Elements(arr)
	if err != nil {
		return errOTLP
	}
	for _, e := range els {
		if err := f(e); err != nil {
			return err
		}
	}
	return nil
}

// checkSyslogHeader checks what a stored syslog message says of its event
// against the event. Where the line holds an RFC 5424 header (wherever it
// starts: a receiver may put its own timestamp and host, a capture an
// octet count, before it), it must be mcpseal's for this event: the
// priority, APP-NAME mcpseal, the MSGID (the op), mcpseal's structured
// data element exactly the event's position (seq, prev, hash) and no
// other element named like it (a relay may add elements of its own), and
// the event right after the structured data, nothing put between;
// timestamp, host and process id are the receiver's and are not read.
// A line without one (a forwarded or traditional format, which keeps no
// structured data) must carry no PRI but the event's and end its prefix
// with mcpseal's tag, "mcpseal[PID]: " or "mcpseal: ", the event right
// after it, and no other tag (": ") before it: a parser reads the first
// as the app. What else a receiver writes before the header or the tag
// (its timestamp and host) is its own and is not read.
func checkSyslogHeader(prefix, ev []byte) error {
	if len(prefix) == 0 {
		return nil // an audit line as chained, not a syslog message
	}
	seq, prev, hash, err := eventPosition(ev)
	if err != nil {
		return errors.New("a syslog message whose event is not an audit event")
	}
	ours := fmt.Sprintf(`[%s seq="%d" prev="%s" hash="%s"]`, sdID, seq, prev, hash)
	pri := strconv.Itoa(facilityLocal0*8 + severity(audit.Line{Raw: ev}))
	bad := errors.New("a syslog message whose header disagrees with its event")
	// Every PRI in the prefix is the event's: a receiver's format may keep
	// it (ForwardFormat: "<133>2026-12-02T… host mcpseal[1]: ").
	for i := bytes.IndexByte(prefix, '<'); i >= 0; {
		if j := priEnd(prefix[i:]); j > 0 && string(prefix[i+1:i+j-1]) != pri {
			return bad
		}
		k := bytes.IndexByte(prefix[i+1:], '<')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	tagEnd := []byte(": ")
	if h := find5424(prefix); h >= 0 {
		if !receiverPrefix(prefix[:h], false, len(prefix)+len(ev)) {
			return bad // a tag or other text before the header: a parser reads it as the app
		}
		f := bytes.SplitN(prefix[h:], []byte(" "), 7) // <PRI>1 TS HOST APP PROCID MSGID SD...
		if len(f) != 7 || string(f[3]) != "mcpseal" || string(f[5]) != printUS(lineMember(ev, "op"), 32) {
			return bad
		}
		// TIMESTAMP, HOSTNAME and PROCID are the receiver's, but must be
		// what RFC 5424 allows there: rsyslog stops parsing the header at
		// a timestamp it cannot read, and grok matches no field empty.
		if string(f[1]) != "-" && !isRFC3339(f[1]) || !is5424Host(f[2]) || !printUSASCII(f[4]) || len(f[4]) > 128 {
			return bad
		}
		rest, found := f[6], false
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
			case bytes.Contains(el, []byte(`\]`)):
				return bad // valid RFC 5424, but grok ends the structured data at it
			}
			rest = rest[n:]
		}
		if !found || string(rest) != " " && string(rest) != " \ufeff" {
			return bad // ours missing, or text between the structured data and the event
		}
		return nil
	}
	if bytes.Contains(prefix, []byte(sdID)) {
		return bad // mcpseal's element outside a header
	}
	notTag := errors.New("a syslog message whose text before the event is not mcpseal's tag")
	if !bytes.HasSuffix(prefix, tagEnd) || bytes.HasSuffix(prefix, []byte(" "+string(tagEnd))) {
		return notTag
	}
	// The tag is the last field: what a parser reads as the app once it
	// has read a timestamp and a host before it.
	body := prefix
	if n := priEnd(body); n > 0 { // a PRI the format kept, checked above: "<133>Dec  2 …" or "<133>2026-…"
		body = body[n:]
	}
	i := bytes.LastIndexByte(body[:len(body)-1], ' ') + 1
	// No octet count here: it frames only a message mcpseal sent, which
	// has its header, and one without a PRI reads as user.notice.
	if !isTag(body[i:len(body)-1]) || !receiverPrefix(body[:i], true, len(prefix)+len(ev)) {
		return notTag
	}
	return nil
}

// isTag says b is mcpseal's syslog tag as a traditional format writes
// it: "mcpseal:" or "mcpseal[PID]:".
func isTag(b []byte) bool {
	b, ok := bytes.CutSuffix(b, []byte(":"))
	if !ok {
		return false
	}
	if rest, ok := bytes.CutPrefix(b, []byte("mcpseal[")); ok {
		pid, ok := bytes.CutSuffix(rest, []byte("]"))
		return ok && len(pid) <= 7 && allDigits(pid) && pid[0] != '0' // grok's POSINT; Linux's pid_max is 2^22
	}
	return string(b) == "mcpseal"
}

// receiverPrefix says b, what comes before a header or a tag, is what a
// receiver writes before a message it stores, and nothing else a parser
// could take for the app: nothing; a byte order mark right before a
// header; before a header (beforeTag false), an RFC 6587 octet count,
// the exact length of the frame (the line less the count and its space:
// it frames the whole message mcpseal sent, so never after a PRI nor
// before a tag); or a timestamp (one RFC 3339 field, or "Mmm dd
// hh:mm:ss" with a one-digit day padded by a space) and a host name. Each
// field ends in one ASCII space, as syslog parsers split (a tab, a
// Unicode space or a second space is part of a field to them, or an
// empty one).
func receiverPrefix(b []byte, beforeTag bool, lineLen int) bool {
	if len(b) == 0 || !beforeTag && string(b) == "\ufeff" {
		return true
	}
	s, ok := bytes.CutSuffix(b, []byte(" "))
	if !ok {
		return false
	}
	f := bytes.Split(s, []byte(" "))
	switch len(f) {
	case 1:
		return !beforeTag && len(f[0]) <= 9 && allDigits(f[0]) && f[0][0] != '0' && string(f[0]) == strconv.Itoa(lineLen-len(b))
	case 2:
		return isRFC3339(f[0]) && isHost(f[1])
	case 4: // Dec 12 16:54:59 host
		return isMonth(f[0]) && isDay(f[1], 2) && isClock(f[2]) && isHost(f[3])
	case 5: // Dec  2 16:54:59 host
		return isMonth(f[0]) && len(f[1]) == 0 && isDay(f[2], 1) && isClock(f[3]) && isHost(f[4])
	}
	return false
}

// isDay says b is a day of the month, 1 to 31, in at most width digits.
func isDay(b []byte, width int) bool {
	n, ok := smallNumber(b, width)
	return ok && n >= 1 && n <= 31
}

// smallNumber is b as a number of 1 to width digits.
func smallNumber(b []byte, width int) (int, bool) {
	if len(b) == 0 || len(b) > width || !allDigits(b) {
		return 0, false
	}
	n := 0
	for _, c := range b {
		n = n*10 + int(c-'0')
	}
	return n, true
}

// isHost says b can be only a host name to a syslog parser, as both
// rsyslog's pmrfc3164 and grok's HOSTNAME read one: labels of 1 to 63
// letters, digits and '-', each starting with a letter or a digit,
// joined by '.', ending with a letter or a digit, at most 255 bytes
// (otherwise rsyslog reads the field as the tag, an address with ':'
// always so, or grok matches no line).
func isHost(b []byte) bool {
	if len(b) == 0 || len(b) > 255 || !isAlnum(b[len(b)-1]) {
		return false
	}
	for _, label := range bytes.Split(b, []byte(".")) {
		if len(label) == 0 || len(label) > 63 || !isAlnum(label[0]) {
			return false
		}
		for _, c := range label {
			if !isAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

// is5424Host says b is an RFC 5424 HOSTNAME grok's SYSLOG5424LINE reads:
// NILVALUE, a host name, or an IPv6 address without a zone.
func is5424Host(b []byte) bool {
	if a, err := netip.ParseAddr(string(b)); err == nil && a.Is6() && a.Zone() == "" {
		return true
	}
	return string(b) == "-" || isHost(b)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// printUSASCII says b is RFC 5424's 1*PRINTUSASCII: one or more bytes
// from 33 to 126.
func printUSASCII(b []byte) bool {
	for _, c := range b {
		if c < 33 || c > 126 {
			return false
		}
	}
	return len(b) > 0
}

// isRFC3339 says b is a timestamp every syslog parser reads as one: RFC
// 3339 with an upper-case 'T' and 'Z', a '.' before at most nine digits
// of fraction, a year before 2100 and an offset within ±23:59, as
// rsyslog's ParseTIMESTAMP3339 reads it (Go's time.Parse also takes a
// comma, any year, and offsets to ±99:99).
func isRFC3339(b []byte) bool {
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil || t.Year() >= 2100 || len(b) < 20 || b[10] != 'T' || bytes.IndexByte(b, ',') >= 0 {
		return false
	}
	zone := b[19:]
	if zone[0] == '.' {
		n := 1
		for n < len(zone) && zone[n] >= '0' && zone[n] <= '9' {
			n++
		}
		if n == 1 || n > 10 {
			return false
		}
		zone = zone[n:]
	}
	if string(zone) == "Z" {
		return true
	}
	if len(zone) != 6 || zone[0] != '+' && zone[0] != '-' || zone[3] != ':' {
		return false
	}
	h, okH := smallNumber(zone[1:3], 2)
	m, okM := smallNumber(zone[4:6], 2)
	return okH && okM && h <= 23 && m <= 59
}

// isClock says b is exactly hh:mm:ss, a time of day (a leap second
// included).
func isClock(b []byte) bool {
	if len(b) != 8 || b[2] != ':' || b[5] != ':' {
		return false
	}
	h, okH := smallNumber(b[0:2], 2)
	m, okM := smallNumber(b[3:5], 2)
	s, okS := smallNumber(b[6:8], 2)
	return okH && okM && okS && h <= 23 && m <= 59 && s <= 60
}

func isMonth(b []byte) bool {
	return len(b) == 3 && strings.Contains("JanFebMarAprMayJunJulAugSepOctNovDec", string(b)) && b[0] >= 'A' && b[0] <= 'Z'
}

// priEnd is the length of the PRI ("<" digits ">", leading zeros
// included: a parser reads them as the number) b starts with, 0 when it
// does not start with one.
func priEnd(b []byte) int {
	n := 1
	for n < len(b) && b[n] >= '0' && b[n] <= '9' { // any number of them: rsyslog reads "<00000000134>" as 134
		n++
	}
	if n == 1 || n == len(b) || b[n] != '>' {
		return 0
	}
	return n + 1
}

// find5424 is where the first RFC 5424 header ("<PRI>1 ") in b begins, -1
// when none does.
func find5424(b []byte) int {
	for i := 0; i < len(b); i++ {
		if b[i] != '<' {
			continue
		}
		if n := priEnd(b[i:]); n > 0 && bytes.HasPrefix(b[i+n:], []byte("1 ")) {
			return i
		}
	}
	return -1
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
		case quoted && c == ']':
			return -1 // RFC 5424 escapes it in a value; unescaped, parsers split there
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
