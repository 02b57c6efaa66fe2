// Package jsonrpc frames newline-delimited JSON-RPC 2.0 messages and peeks at
// their envelopes without changing a byte.
//
// # The byte-faithful contract
//
// mcpseal sits between an MCP client and an MCP server. Whatever the gate
// does not have to change must reach the other side exactly as it was sent:
// ids such as 1.5 or 9007199254740993 that a decoder would round, members
// this version of the protocol does not know, whitespace inside results.
// Decoding a message and encoding it again loses all three, so this package
// never does. It works on raw bytes:
//
//   - [Reader] splits a stream into frames at "\n". A frame is the line
//     without its "\n" and without one "\r" before it; nothing else is
//     removed or added. Blank lines are skipped. A line longer than the limit
//     is reported and discarded without being held in memory.
//   - [Writer] writes a frame and "\n" in one write. It refuses a frame that
//     contains "\n", which would let one message smuggle in another.
//   - [Peek] validates a frame and classifies it. The id, params, result and
//     error it returns are subslices of the frame: forwarding the frame or
//     echoing the id sends the bytes the peer sent.
//   - [Members] and [Elements] split an object or array into raw members and
//     elements the same way, for the layers above that inspect params or
//     results.
//
// Decoded copies are for analysis; the frame is what is forwarded and
// hashed.
//
// # Strictness
//
// A proxy is only as good as its agreement with the parsers on either side
// of it. Where two common parsers would read the same bytes as different
// messages, this package rejects the bytes rather than pick a reading:
//
//   - invalid UTF-8 and escaped lone surrogates in any string (decoders
//     replace, keep or reject them);
//   - duplicate member names at the top level of a message, compared after
//     decoding escapes (decoders keep the first or the last);
//   - top-level member names that equal a JSON-RPC member name only when
//     case is folded, such as "ID" or "Method" (Go's encoding/json matches
//     struct fields case-insensitively);
//   - "method" together with "result" or "error" (request or response?);
//   - nesting deeper than 512 (recursive parsers overflow);
//   - anything after the value, such as a second object on the same line.
//
// Peek validates the whole frame, nested values included, but decodes only
// the method name and the top-level member names. Duplicate names inside
// nested objects are left to the layer that decodes them; [Members] detects
// them in any object it is given.
//
// Errors wrap [ErrSyntax] (not JSON: answer with Parse error, -32700) or
// [ErrInvalid] (JSON, but not a valid message: Invalid Request, -32600).
// They name an offset and never quote the input.
//
// # Example
//
// A client sends
//
//	{"jsonrpc":"2.0", "id":9007199254740993, "method":"tools/call", "params":{"name":"x"}, "trace":"t-1"}
//
// Peek returns a Message with Kind Request, Method "tools/call", ID the
// 16 bytes 9007199254740993 and Params the bytes {"name":"x"}; the unknown
// "trace" member and the spaces stay in the frame, which the gate forwards
// as it is. The server answers with id 9007199254740993; [IDKey] of both ids
// is "n:9007199254740993", so the gate pairs them. Had the gate decoded the
// id into a float64 it would have sent 9007199254740992.
//
// To refuse the call instead, the gate answers with
// NewError(msg.ID, code, "blocked by policy", nil), which echoes the id
// bytes exactly as the client sent them.
package jsonrpc

import "bytes"

// Kind classifies a message.
type Kind int

const (
	Invalid      Kind = iota // Peek returned an error
	Request                  // "method" and "id"
	Notification             // "method" without "id"
	Response                 // "id" and exactly one of "result" or "error"
	Batch                    // a JSON array; its elements are not classified
)

func (k Kind) String() string {
	switch k {
	case Request:
		return "request"
	case Notification:
		return "notification"
	case Response:
		return "response"
	case Batch:
		return "batch"
	}
	return "invalid"
}

// Message is a peeked envelope. All []byte fields alias the frame: they are
// the raw value bytes without surrounding whitespace.
type Message struct {
	Kind   Kind
	ID     []byte // raw id as sent, e.g. `1`, `"abc"`, `1.5`, `null`; nil when absent
	Method string // decoded
	Params []byte // raw, nil when absent
	Result []byte // raw, nil when absent
	Error  []byte // raw, nil when absent
}

// Bits for the JSON-RPC members a message carries.
const (
	hasVersion = 1 << iota
	hasID
	hasMethod
	hasParams
	hasResult
	hasError
)

// envelopeNames are the member names Peek interprets; a top-level name that
// equals one of them only when case is folded is rejected.
var envelopeNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// Peek validates that frame is exactly one JSON value (surrounding
// whitespace allowed) and classifies it without decoding nested values.
//
// The top level must be an object, or a non-empty array (Kind Batch, whose
// elements are validated as JSON but not classified: use [Elements] and Peek
// each one). "jsonrpc" must be the string "2.0". A request has a string
// "method" and an "id"; a notification has a "method" and no "id"; a
// response has no "method", an "id" and exactly one of "result" or "error".
// An id is a string, a number or null, and null only on an error response.
// "params", when present, is an object or an array; "error" is an object.
// Unknown members are allowed and ignored. See the package documentation for
// what else is rejected as ambiguous.
//
// On error the Message has Kind Invalid. For ErrInvalid, its ID is set when
// the frame carried exactly one "id" of a valid type, so that the gate can
// answer a malformed request under the id its sender waits on.
func Peek(frame []byte) (Message, error) {
	i := skipSpace(frame, 0)
	if i >= len(frame) {
		return Message{}, syntaxErr("empty frame", i)
	}
	switch frame[i] {
	case '{':
		return peekObject(frame)
	case '[':
		end, err := skipValue(frame, i, maxDepth)
		if err != nil {
			return Message{}, err
		}
		if err := endOfInput(frame, end); err != nil {
			return Message{}, err
		}
		if frame[skipSpace(frame, i+1)] == ']' {
			return Message{}, invalidErr("empty batch", i)
		}
		return Message{Kind: Batch}, nil
	}
	return Message{}, notA(frame, i, "message is not an object")
}

func peekObject(frame []byte) (Message, error) {
	it, err := startObject(frame)
	if err != nil {
		return Message{}, err
	}
	var (
		m       Message
		version []byte
		method  []byte
		seen    int
		others  nameSet
		idDup   bool
		semErr  error // first semantic error; syntax errors take precedence
	)
	var mem rawMember
	for {
		ok, err := it.next(&mem)
		if err != nil {
			return Message{}, err
		}
		if !ok {
			break
		}
		name := mem.name(nil)
		var bit int
		switch string(name) {
		case "jsonrpc":
			bit, version = hasVersion, mem.value
		case "id":
			bit, m.ID = hasID, mem.value
		case "method":
			bit, method = hasMethod, mem.value
		case "params":
			bit, m.Params = hasParams, mem.value
		case "result":
			bit, m.Result = hasResult, mem.value
		case "error":
			bit, m.Error = hasError, mem.value
		default:
			if semErr == nil {
				if foldsToEnvelopeName(name) {
					semErr = invalidErr("member name differs from a JSON-RPC name only in case", mem.off)
				} else if !others.add(name) {
					semErr = invalidErr("duplicate member name", mem.off)
				}
			}
			continue
		}
		if seen&bit != 0 {
			idDup = idDup || bit == hasID
			if semErr == nil {
				semErr = invalidErr("duplicate member name", mem.off)
			}
		}
		seen |= bit
	}
	if semErr == nil {
		semErr = checkEnvelope(&m, seen, version, method)
	}
	if semErr != nil {
		id := m.ID
		if idDup || !isIDValue(id) {
			id = nil
		}
		return Message{ID: id}, semErr
	}
	return m, nil
}

// checkEnvelope applies the JSON-RPC 2.0 rules to the members Peek found and
// sets m.Kind and m.Method.
func checkEnvelope(m *Message, seen int, version, method []byte) error {
	if seen&hasVersion == 0 {
		return invalidErr("missing jsonrpc member", -1)
	}
	if string(version) != `"2.0"` {
		if s, err := DecodeString(version); err != nil || s != "2.0" {
			return invalidErr(`jsonrpc member is not "2.0"`, -1)
		}
	}
	if seen&hasID != 0 && !isIDValue(m.ID) {
		return invalidErr("id is not a string, number or null", -1)
	}
	if seen&hasParams != 0 && m.Params[0] != '{' && m.Params[0] != '[' {
		return invalidErr("params is not an object or array", -1)
	}
	if seen&hasMethod != 0 {
		if method[0] != '"' {
			return invalidErr("method is not a string", -1)
		}
		if seen&(hasResult|hasError) != 0 {
			return invalidErr("request carries result or error", -1)
		}
		m.Kind = Notification
		if seen&hasID != 0 {
			if m.ID[0] == 'n' {
				return invalidErr("request id is null", -1)
			}
			m.Kind = Request
		}
		m.Method = decodeMethod(method)
		return nil
	}
	if seen&hasID == 0 {
		return invalidErr("message has neither method nor id", -1)
	}
	switch seen & (hasResult | hasError) {
	case hasResult:
		if m.ID[0] == 'n' {
			return invalidErr("result with null id", -1)
		}
	case hasError:
		if m.Error[0] != '{' {
			return invalidErr("error is not an object", -1)
		}
	case 0:
		return invalidErr("response has neither result nor error", -1)
	default:
		return invalidErr("response has both result and error", -1)
	}
	m.Kind = Response
	return nil
}

// isIDValue reports whether v, a valid JSON value, may be an id.
func isIDValue(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	c := v[0]
	return c == '"' || c == '-' || isDigit(c) || c == 'n'
}

// foldsToEnvelopeName reports whether name equals a JSON-RPC member name
// under Unicode case folding ("ID", "Method", "paramſ").
func foldsToEnvelopeName(name []byte) bool {
	for _, n := range envelopeNames {
		if bytes.EqualFold(name, []byte(n)) {
			return true
		}
	}
	return false
}

// knownMethods interns the MCP method names, so that peeking at ordinary
// traffic does not allocate a string per message.
var knownMethods = func() map[string]string {
	names := []string{
		"initialize", "ping", "server/discover", "subscriptions/listen",
		"tools/list", "tools/call",
		"prompts/list", "prompts/get",
		"resources/list", "resources/read", "resources/templates/list",
		"resources/subscribe", "resources/unsubscribe",
		"completion/complete", "logging/setLevel",
		"sampling/createMessage", "elicitation/create", "roots/list",
		"tasks/get", "tasks/list", "tasks/result", "tasks/cancel",
		"notifications/initialized", "notifications/cancelled",
		"notifications/progress", "notifications/message",
		"notifications/tools/list_changed", "notifications/prompts/list_changed",
		"notifications/resources/list_changed", "notifications/resources/updated",
		"notifications/roots/list_changed", "notifications/elicitation/complete",
		"notifications/tasks/status",
	}
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[n] = n
	}
	return m
}()

// decodeMethod decodes a method value that scanString accepted.
func decodeMethod(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		if s, ok := knownMethods[string(body)]; ok {
			return s
		}
		return string(body)
	}
	return string(unescape(make([]byte, 0, len(body)), body))
}

// AppendIDKey appends IDKey(id) to dst, without allocating for a number,
// null or a string without escapes: a map lookup by string(AppendIDKey(
// buf[:0], id)) costs no allocation.
func AppendIDKey(dst, id []byte) []byte {
	i := skipSpace(id, 0)
	if i >= len(id) {
		return dst
	}
	switch c := id[i]; {
	case c == '"':
		end, escaped, err := scanString(id, i)
		if err != nil || endOfInput(id, end) != nil {
			return dst
		}
		dst = append(dst, "s:"...)
		if escaped {
			return unescape(dst, id[i+1:end-1])
		}
		return append(dst, id[i+1:end-1]...)
	case c == 'n':
		if end, err := scanLiteral(id, i, "null"); err == nil && endOfInput(id, end) == nil {
			return append(dst, "null"...)
		}
	case c == '-' || isDigit(c):
		if end, err := scanNumber(id, i); err == nil && endOfInput(id, end) == nil {
			return append(append(dst, "n:"...), id[i:end]...)
		}
	}
	return dst
}

// IDKey returns a correlation key for a raw id: "s:" and the decoded value
// for a string, "n:" and the raw bytes for a number, "null" for null.
// Numbers are compared as sent: 1 and 1.0 are different ids. It returns ""
// when id is not a valid JSON string, number or null.
func IDKey(id []byte) string {
	i := skipSpace(id, 0)
	if i >= len(id) {
		return ""
	}
	switch c := id[i]; {
	case c == '"':
		s, err := DecodeString(id)
		if err != nil {
			return ""
		}
		return "s:" + s
	case c == 'n':
		if end, err := scanLiteral(id, i, "null"); err == nil && endOfInput(id, end) == nil {
			return "null"
		}
	case c == '-' || isDigit(c):
		if end, err := scanNumber(id, i); err == nil && endOfInput(id, end) == nil {
			return "n:" + string(id[i:end])
		}
	}
	return ""
}
