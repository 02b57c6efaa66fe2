package jsonrpc

import (
	"errors"
	"strconv"
	"strings"
)

var (
	// ErrSyntax is wrapped by every error for input that is not exactly one
	// valid JSON value as this package reads JSON: RFC 8259, UTF-8 only, no
	// escaped lone surrogates, nesting at most 512 deep. A gate answers it
	// with JSON-RPC's Parse error (-32700).
	ErrSyntax = errors.New("jsonrpc: invalid JSON")

	// ErrInvalid is wrapped by every error for valid JSON that is not an
	// acceptable message or object: a wrong shape or member type, a
	// duplicate member, a member name that differs from a JSON-RPC name only
	// in case. A gate answers it with Invalid Request (-32600).
	ErrInvalid = errors.New("jsonrpc: invalid message")
)

// parseError is the error for input the package rejects. It carries a fixed
// description and an offset, never input bytes.
type parseError struct {
	kind error // ErrSyntax or ErrInvalid
	what string
	off  int // -1 when the error is about the message as a whole
}

func (e *parseError) Error() string {
	if e.off < 0 {
		return e.kind.Error() + ": " + e.what
	}
	return e.kind.Error() + ": " + e.what + " at offset " + strconv.Itoa(e.off)
}

func (e *parseError) Unwrap() error { return e.kind }

func syntaxErr(what string, off int) error {
	return &parseError{kind: ErrSyntax, what: what, off: off}
}

func invalidErr(what string, off int) error {
	return &parseError{kind: ErrInvalid, what: what, off: off}
}

// Member is one top-level member of a JSON object.
type Member struct {
	Key   string // decoded
	Value []byte // raw, trimmed, aliases the input
}

// Members returns the top-level members of a JSON object in order. Nested
// values are validated but not decoded. It fails on invalid JSON, on a value
// that is not an object and on duplicate member names (compared after
// decoding escapes).
func Members(obj []byte) ([]Member, error) { return MembersKnowing(obj, "", "") }

// MembersKnowing is Members for an object whose member name often holds,
// byte for byte, a value read before: known, an object that Members (or
// MembersKnowing) returned as the value of a member of that name. A
// member name, spelt without escapes, whose value begins with known has
// that value without it being read again: an object ends at its own
// closing brace and reading it looks at nothing past it, so the same
// bytes are accepted the same way. (A 2026-07-28 client sends the same
// params._meta with every request.) A known that is not an object is not
// used.
func MembersKnowing(obj []byte, name, known string) ([]Member, error) {
	it, err := startObject(obj)
	if err != nil {
		return nil, err
	}
	if len(known) > 0 && known[0] == '{' {
		it.knownName, it.known = name, known
	}
	var (
		out    = make([]Member, 0, 8) // one allocation for the usual object
		names  nameSet
		dupErr error
	)
	var m rawMember
	for {
		ok, err := it.next(&m)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		name := m.name(nil)
		if !names.add(name) && dupErr == nil {
			dupErr = invalidErr("duplicate member name", m.off)
		}
		out = append(out, Member{Key: memberKey(name), Value: m.value})
	}
	if dupErr != nil {
		return nil, dupErr
	}
	return out, nil
}

// Lookup sets values[i] to the raw value of obj's top-level member
// names[i], nil when it is absent. It checks what Members checks (valid
// JSON, an object, no name twice, compared after decoding escapes) without
// building the member list; on an error every value is nil. names should be few: they are compared one by
// one with each member's.
func Lookup(obj []byte, names []string, values [][]byte) error {
	return lookupNames(obj, names, values, false)
}

// ErrCaseVariant is LookupStrict's error for a member whose name equals
// one of the names looked up in all but case: a case-insensitive decoder
// (Go's encoding/json) would read it as that member.
var ErrCaseVariant = errors.New("jsonrpc: a member name equals a looked-up one but for case")

// LookupStrict is Lookup that also fails, with ErrCaseVariant, when a
// member's name equals one of names up to case (strings.EqualFold) but not
// exactly. names must be ASCII.
func LookupStrict(obj []byte, names []string, values [][]byte) error {
	return lookupNames(obj, names, values, true)
}

// ErrAlias is LookupUnaliased's error for a member whose name a lenient
// decoder reads as one of the names looked up.
var ErrAlias = errors.New("jsonrpc: a member name reads as a looked-up one to a lenient decoder")

// LookupUnaliased is LookupStrict that also fails, with ErrAlias, when a
// member's name equals one of names once '_' and '-' are dropped from
// both and case is folded: what lenient decoders read as that member
// (encoding/json/v2 matching names case-insensitively ignores them;
// pydantic models read a field by its name beside its alias, "meta"
// beside "_meta"; OTLP's JSON readers take "string_value" for
// "stringValue"). It builds the member list: for small objects off the
// hot path.
func LookupUnaliased(obj []byte, names []string, values [][]byte) error {
	clear(values)
	ms, err := Members(obj)
	if err != nil {
		return err
	}
	for _, m := range ms {
		for i, n := range names {
			switch {
			case m.Key == n:
				values[i] = m.Value
			case strings.EqualFold(unseparated(m.Key), unseparated(n)):
				clear(values)
				return ErrAlias
			}
		}
	}
	return nil
}

// unseparated is s without '_' and '-'.
func unseparated(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return r
	}, s)
}

func lookupNames(obj []byte, names []string, values [][]byte, strict bool) error {
	clear(values)
	it, err := startObject(obj)
	if err != nil {
		return err
	}
	var (
		seen   nameSet
		dupErr error
		m      rawMember
	)
	for {
		ok, err := it.next(&m)
		if err != nil {
			clear(values)
			return err
		}
		if !ok {
			break
		}
		name := m.name(nil)
		if !seen.add(name) && dupErr == nil {
			dupErr = invalidErr("duplicate member name", m.off)
		}
		for i, n := range names {
			switch {
			case string(name) == n:
				values[i] = m.value
			case strict && dupErr == nil && bytesEqualFold(name, n):
				dupErr = ErrCaseVariant
			}
		}
	}
	if dupErr != nil {
		clear(values)
		return dupErr
	}
	return nil
}

// bytesEqualFold is strings.EqualFold(string(b), s) for an ASCII s. A
// name that folds to s has at least its length and at most three times it
// (the Kelvin sign is three bytes and folds to "k"); within that bound the
// conversion stays on the stack for the short names looked up.
func bytesEqualFold(b []byte, s string) bool {
	return len(b) >= len(s) && len(b) <= 3*len(s) && strings.EqualFold(string(b), s)
}

// CheckNames checks that obj is one JSON object that repeats no member
// name and has no member whose name equals one of names up to case
// (strings.EqualFold, which folds as Go's encoding/json does, the Kelvin
// sign and the long s included) without being it: a case-insensitive
// decoder would read such a member as that name, a reviewer as another.
// It returns ErrCaseVariant for that, Members' error otherwise.
func CheckNames(obj []byte, names []string) error {
	ms, err := Members(obj)
	if err != nil {
		return err
	}
	for _, m := range ms {
		for _, n := range names {
			if m.Key != n && strings.EqualFold(m.Key, n) {
				return ErrCaseVariant
			}
		}
	}
	return nil
}

// Elements returns the raw elements of a JSON array in order, each trimmed
// and aliasing the input. Nested values are validated but not decoded.
func Elements(arr []byte) ([][]byte, error) {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return nil, notA(arr, i, "not an array")
	}
	var out [][]byte
	if i = skipSpace(arr, i+1); i < len(arr) && arr[i] == ']' {
		return out, endOfInput(arr, i+1)
	}
	for {
		end, err := skipValue(arr, i, maxDepth-1)
		if err != nil {
			return nil, err
		}
		out = append(out, arr[i:end])
		i = skipSpace(arr, end)
		if i >= len(arr) {
			return nil, syntaxErr("unexpected end", i)
		}
		switch arr[i] {
		case ',':
			i = skipSpace(arr, i+1)
		case ']':
			if err := endOfInput(arr, i+1); err != nil {
				return nil, err
			}
			return out, nil
		default:
			return nil, syntaxErr("unexpected byte", i)
		}
	}
}

// DecodeString decodes a raw JSON string value (surrounding whitespace
// allowed).
func DecodeString(raw []byte) (string, error) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '"' {
		return "", notA(raw, i, "not a string")
	}
	end, escaped, err := scanString(raw, i)
	if err != nil {
		return "", err
	}
	if err := endOfInput(raw, end); err != nil {
		return "", err
	}
	body := raw[i+1 : end-1]
	if !escaped {
		return string(body), nil
	}
	return string(unescape(make([]byte, 0, len(body)), body)), nil
}

// notA returns the error for input whose value at i has the wrong type: a
// syntax error if the input is not valid JSON, else ErrInvalid with what.
func notA(d []byte, i int, what string) error {
	end, err := skipValue(d, i, maxDepth)
	if err != nil {
		return err
	}
	if err := endOfInput(d, end); err != nil {
		return err
	}
	return invalidErr(what, i)
}

// objectIter walks the top-level members of an object.
type objectIter struct {
	d     []byte
	i     int // position after the last member, or after '{'
	count int
	done  bool
	// knownName's value, when it begins with known, is known (see
	// MembersKnowing).
	knownName, known string
}

// rawMember is one member as objectIter found it.
type rawMember struct {
	key     []byte // name without quotes, escapes not decoded
	escaped bool
	off     int // offset of the name's opening quote
	value   []byte
}

// name returns the decoded member name, appending to buf when it must decode
// escapes and aliasing the input otherwise.
func (m *rawMember) name(buf []byte) []byte {
	if !m.escaped {
		return m.key
	}
	return unescape(buf[:0], m.key)
}

// startObject checks that d holds an object, possibly after whitespace, and
// returns an iterator over its members.
func startObject(d []byte) (objectIter, error) {
	i := skipSpace(d, 0)
	if i >= len(d) || d[i] != '{' {
		return objectIter{}, notA(d, i, "not an object")
	}
	return objectIter{d: d, i: i + 1}, nil
}

// next reads the next member into m. At the closing brace it checks that
// only whitespace follows and returns false.
func (it *objectIter) next(m *rawMember) (bool, error) {
	if it.done {
		return false, nil
	}
	d := it.d
	i := skipSpace(d, it.i)
	if i < len(d) && d[i] == '}' {
		it.done = true
		return false, endOfInput(d, i+1)
	}
	if it.count > 0 {
		if i >= len(d) {
			return false, syntaxErr("unexpected end", i)
		}
		if d[i] != ',' {
			return false, syntaxErr("unexpected byte", i)
		}
		i = skipSpace(d, i+1)
	}
	if i >= len(d) || d[i] != '"' {
		return false, syntaxErr("expected member name", i)
	}
	end, escaped, err := scanString(d, i)
	if err != nil {
		return false, err
	}
	m.off, m.key, m.escaped = i, d[i+1:end-1], escaped
	if i, err = scanColon(d, end); err != nil {
		return false, err
	}
	switch {
	case it.known != "" && !escaped && string(m.key) == it.knownName &&
		len(d)-i >= len(it.known) && string(d[i:i+len(it.known)]) == it.known:
		end = i + len(it.known)
	default:
		if end, err = skipMemberValue(d, i); err != nil {
			return false, err
		}
	}
	m.value = d[i:end]
	it.i = end
	it.count++
	return true, nil
}

// skipMemberValue skips the value of a top-level member, taking strings
// and numbers, the common envelope values, without skipValue's set-up.
func skipMemberValue(d []byte, i int) (int, error) {
	if i < len(d) {
		switch c := d[i]; {
		case c == '"':
			end, _, err := scanString(d, i)
			return end, err
		case c == '-' || isDigit(c):
			return scanNumber(d, i)
		}
	}
	return skipValue(d, i, maxDepth-1)
}

// nameSet detects duplicate member names. It compares a few names linearly
// and switches to a map when there are more, so an object with many members
// costs linear time.
// memberKey returns name as a string, without allocating for the member
// names every message carries.
func memberKey(name []byte) string {
	switch string(name) { // compiled without a conversion
	case "jsonrpc":
		return "jsonrpc"
	case "id":
		return "id"
	case "method":
		return "method"
	case "params":
		return "params"
	case "result":
		return "result"
	case "error":
		return "error"
	case "_meta":
		return "_meta"
	case "name":
		return "name"
	case "arguments":
		return "arguments"
	case "cursor":
		return "cursor"
	case "content":
		return "content"
	case "isError":
		return "isError"
	case "structuredContent":
		return "structuredContent"
	case "progressToken":
		return "progressToken"
	case "io.modelcontextprotocol/protocolVersion":
		return "io.modelcontextprotocol/protocolVersion"
	case "io.modelcontextprotocol/clientInfo":
		return "io.modelcontextprotocol/clientInfo"
	case "io.modelcontextprotocol/clientCapabilities":
		return "io.modelcontextprotocol/clientCapabilities"
	}
	return string(name)
}

type nameSet struct {
	small [8][]byte
	n     int
	big   map[string]struct{}
}

// add adds name and reports whether it was new. The set keeps name, so the
// caller must not modify it afterwards.
func (s *nameSet) add(name []byte) bool {
	if s.big != nil {
		if _, dup := s.big[string(name)]; dup {
			return false
		}
		s.big[string(name)] = struct{}{}
		return true
	}
	for _, p := range s.small[:s.n] {
		if string(p) == string(name) {
			return false
		}
	}
	if s.n < len(s.small) {
		s.small[s.n] = name
		s.n++
		return true
	}
	s.big = make(map[string]struct{}, 4*len(s.small))
	for _, p := range s.small {
		s.big[string(p)] = struct{}{}
	}
	s.big[string(name)] = struct{}{}
	return true
}

// CheckUnique validates v, one JSON value, and checks that no object in
// it, at any depth, repeats a member name (compared after decoding
// escapes). Decoders keep the first or the last of repeated names, so a
// value that repeats one can be read two ways; a gate that reads such a
// value must refuse it rather than pick a reading.
func CheckUnique(v []byte) error {
	return checkUnique(v, maxDepth)
}

func checkUnique(v []byte, depth int) error {
	i := skipSpace(v, 0)
	if i >= len(v) {
		return syntaxErr("unexpected end", i)
	}
	switch v[i] {
	case '{':
		if depth <= 0 {
			return syntaxErr("nesting too deep", i)
		}
		ms, err := Members(v)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if isScalar(m.Value) {
				continue
			}
			if err := checkUnique(m.Value, depth-1); err != nil {
				return err
			}
		}
		return nil
	case '[':
		if depth <= 0 {
			return syntaxErr("nesting too deep", i)
		}
		es, err := Elements(v)
		if err != nil {
			return err
		}
		for _, e := range es {
			if isScalar(e) {
				continue
			}
			if err := checkUnique(e, depth-1); err != nil {
				return err
			}
		}
		return nil
	}
	end, err := skipValue(v, i, depth)
	if err != nil {
		return err
	}
	return endOfInput(v, end)
}

// isScalar reports whether a raw value that Members or Elements returned
// (trimmed, already validated) is neither an object nor an array.
func isScalar(v []byte) bool { return len(v) > 0 && v[0] != '{' && v[0] != '[' }
