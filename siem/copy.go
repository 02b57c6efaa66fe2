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
// with them: count is their number, first and prev the first event's seq
// and prev, last and hash the last one's. A batch that lost an event, or
// whose envelope was rewritten, proves a gap or a rewrite by itself.
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
	fSeq, fPrev, _, errF := eventPosition(els[0])
	lSeq, _, lHash, errL := eventPosition(els[len(els)-1])
	switch {
	case errors.Join(errF, errL) != nil:
		return nil, errors.New("a batch whose events are not audit events")
	case count != int64(len(els)) || first != fSeq || last != lSeq || prev != fPrev || hash != lHash:
		return nil, errors.New("a batch whose envelope disagrees with its events: an event was lost or the batch rewritten")
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
// named twice, or beside a case variant of its name, is refused, since
// readers differ on which copy they take (encoding/json takes the last,
// and matches names in any case) and the check must read what the SIEM
// shows.
func otlpBodies(line []byte) ([][]byte, error) {
	bad := errors.New("an OTLP logs export that is not one unambiguous JSON document")
	var out [][]byte
	err := eachOf(line, "resourceLogs", func(rl []byte) error {
		return eachOf(rl, "scopeLogs", func(sl []byte) error {
			return eachOf(sl, "logRecords", func(r []byte) error {
				body, err := strictMember(r, "body")
				if err != nil {
					return err
				}
				sv, err := strictMember(body, "stringValue")
				if err != nil {
					return err
				}
				if sv == nil {
					return errors.New("an OTLP log record without a string body")
				}
				text, err := jsonrpc.DecodeString(sv)
				if err != nil {
					return errors.New("an OTLP log record without a string body")
				}
				out = append(out, []byte(text))
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

var errAmbiguous = errors.New("ambiguous")

// strictMember is obj's member name (nil when absent); obj must be one
// unambiguous object (jsonrpc.LookupStrict).
func strictMember(obj []byte, name string) ([]byte, error) {
	var v [1][]byte
	if jsonrpc.LookupStrict(obj, []string{name}, v[:]) != nil {
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
	if arr[0] != '[' {
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
// against the event itself: the structured data's seq, prev and hash,
// and, when the receiver kept the RFC 5424 header, its priority and its
// MSGID (the op), which SIEM rules key on. Timestamp, host and process id
// are the receiver's to rewrite and are not read. A receiver that stores
// only the message (a traditional file format) leaves nothing to check.
func checkSyslogHeader(prefix, ev []byte) error {
	if i := bytes.Index(prefix, []byte("["+sdID+" ")); i >= 0 {
		sd := prefix[i:]
		seq, prev, hash, err := eventPosition(ev)
		if err != nil {
			return errors.New("a syslog message whose event is not an audit event")
		}
		want := fmt.Sprintf(`[%s seq="%d" prev="%s" hash="%s"]`, sdID, seq, prev, hash)
		if !bytes.Equal(bytes.TrimRight(sd, " "), []byte(want)) {
			return errors.New("a syslog message whose structured data disagrees with its event")
		}
	}
	f := bytes.Fields(prefix)
	if len(f) < 6 || len(f[0]) < 4 || f[0][0] != '<' || !bytes.HasSuffix(f[0], []byte(">1")) {
		return nil // not an RFC 5424 header
	}
	l := audit.Line{Raw: ev}
	pri := strconv.Itoa(facilityLocal0*8 + severity(l))
	if string(f[0]) != "<"+pri+">1" || string(f[5]) != printUS(lineMember(ev, "op"), 32) {
		return errors.New("a syslog message whose priority or message id disagrees with its event")
	}
	return nil
}
