package egress

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// Streamable HTTP header names (canonical form).
const (
	sessionHeader = "Mcp-Session-Id"
	versionHeader = "Mcp-Protocol-Version"
	methodHeader  = "Mcp-Method"
	nameHeader    = "Mcp-Name"
	paramPrefix   = "Mcp-Param-"
	lastIDHeader  = "Last-Event-Id"

	// W3C Trace Context headers, set only when the session is traced.
	traceparentHeader = "Traceparent"
	tracestateHeader  = "Tracestate"

	// ModernVersion is the first protocol version with the stateless
	// transport and the standard request headers.
	ModernVersion = "2026-07-28"
	// CodeHeaderMismatch is the 2026-07-28 HeaderMismatch error.
	CodeHeaderMismatch = -32020

	metaVersionKey = "io.modelcontextprotocol/protocolVersion"
	b64Prefix      = "=?base64?"
	b64Suffix      = "?="
	// maxBoundTools bounds the tools whose x-mcp-header bindings are kept.
	maxBoundTools = 10000
)

// ErrHeaderMismatch: the standard headers do not match the body.
var ErrHeaderMismatch = errors.New("the Mcp-* request headers do not match the body")

// Bindings remembers, per tool name, which arguments the tool's
// inputSchema mirrors into Mcp-Param-* headers (x-mcp-header annotations),
// learned from the tools/list results that passed. Safe for concurrent use.
type Bindings struct {
	mu    sync.Mutex
	tools map[string][]binding
}

type binding struct {
	path   []string
	header string
}

// NewBindings returns an empty set.
func NewBindings() *Bindings { return &Bindings{tools: make(map[string][]binding)} }

// schemaProp is the part of a JSON Schema property that x-mcp-header needs.
type schemaProp struct {
	Type       any                   `json:"type"`
	Header     json.RawMessage       `json:"x-mcp-header"`
	Properties map[string]schemaProp `json:"properties"`
}

// Learn records the bindings of every tool in a tools/list result.
func (b *Bindings) Learn(result []byte) {
	var page struct {
		Tools []struct {
			Name        string     `json:"name"`
			InputSchema schemaProp `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range page.Tools {
		var out []binding
		collect(t.InputSchema.Properties, nil, &out, 0)
		if _, ok := b.tools[t.Name]; !ok && len(b.tools) >= maxBoundTools {
			continue
		}
		b.tools[t.Name] = out
	}
}

func collect(props map[string]schemaProp, prefix []string, out *[]binding, depth int) {
	if depth > 16 {
		return
	}
	for name, p := range props {
		path := append(append([]string(nil), prefix...), name)
		var h string
		if json.Unmarshal(p.Header, &h) == nil && validToken(h) {
			*out = append(*out, binding{path: path, header: h})
		}
		collect(p.Properties, path, out, depth+1)
	}
}

func (b *Bindings) of(tool string) []binding {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tools[tool]
}

// MetaVersion returns the protocol version in params._meta, or "".
func MetaVersion(params []byte) string {
	v, _ := stringMember(member(params, "_meta"), metaVersionKey)
	return v
}

// SetHeaders sets Mcp-Method, Mcp-Name and Mcp-Param-* for m, derived from
// the body alone, so that they always match what is sent.
func SetHeaders(h http.Header, m jsonrpc.Message, b *Bindings) {
	if m.Method == "" {
		return
	}
	h.Set(methodHeader, m.Method)
	p := readParams(m.Params)
	if name, ok := p.nameOf(m.Method); ok {
		h.Set(nameHeader, encodeValue(name))
	}
	if m.Method != "tools/call" {
		return
	}
	name, _ := stringValue(p.name)
	for _, bd := range b.of(name) {
		if v, ok := primitiveAt(p.arguments, bd.path); ok {
			h.Set(paramPrefix+bd.header, encodeValue(v))
		}
	}
}

// CheckHeaders checks a modern request's headers against its body: the
// protocol version, Mcp-Method, Mcp-Name and the Mcp-Param-* headers of
// the tool's known bindings. It returns ErrHeaderMismatch or nil.
func CheckHeaders(h http.Header, m jsonrpc.Message, b *Bindings) error {
	p := readParams(m.Params)
	if v, _ := stringMember(p.meta, metaVersionKey); v != "" && h.Get(versionHeader) != v {
		return ErrHeaderMismatch
	}
	if got := h.Values(methodHeader); len(got) != 1 || got[0] != m.Method {
		if m.Kind == jsonrpc.Request || len(got) > 0 {
			return ErrHeaderMismatch
		}
	}
	if name, ok := p.nameOf(m.Method); ok {
		got := h.Values(nameHeader)
		if len(got) != 1 {
			return ErrHeaderMismatch
		}
		if dec, ok := decodeValue(got[0]); !ok || dec != name {
			return ErrHeaderMismatch
		}
	}
	if m.Method != "tools/call" {
		return nil
	}
	name, _ := stringValue(p.name)
	for _, bd := range b.of(name) {
		got := h.Values(paramPrefix + bd.header)
		v, ok := primitiveAt(p.arguments, bd.path)
		if !ok {
			if len(got) > 0 {
				return ErrHeaderMismatch
			}
			continue
		}
		if len(got) != 1 {
			return ErrHeaderMismatch
		}
		dec, ok := decodeValue(got[0])
		if !ok || !sameValue(dec, v) {
			return ErrHeaderMismatch
		}
	}
	return nil
}

// requestParams are the members of a request's params that the headers
// are derived from, found in one pass over params (each is nil when
// absent, or when params is not a valid object, as member would say).
type requestParams struct {
	meta, name, uri, arguments []byte
}

func readParams(params []byte) requestParams {
	var p requestParams
	if len(params) == 0 {
		return p
	}
	ms, err := jsonrpc.Members(params) // refuses duplicate names: each key is there once
	if err != nil {
		return p
	}
	for _, m := range ms {
		switch m.Key {
		case "_meta":
			p.meta = m.Value
		case "name":
			p.name = m.Value
		case "uri":
			p.uri = m.Value
		case "arguments":
			p.arguments = m.Value
		}
	}
	return p
}

// nameOf is what Mcp-Name carries for a request of method.
func (p requestParams) nameOf(method string) (string, bool) {
	switch method {
	case "tools/call", "prompts/get":
		return stringValue(p.name)
	case "resources/read":
		return stringValue(p.uri)
	}
	return "", false
}

// primitiveAt returns the header form of the string, boolean or safe
// integer at path in args; ok is false for anything else or null.
func primitiveAt(args []byte, path []string) (string, bool) {
	v := args
	for _, k := range path {
		if v = member(v, k); v == nil {
			return "", false
		}
	}
	switch {
	case len(v) == 0:
		return "", false
	case v[0] == '"':
		s, err := jsonrpc.DecodeString(v)
		return s, err == nil
	case string(v) == "true", string(v) == "false":
		return string(v), true
	case v[0] == '-' || '0' <= v[0] && v[0] <= '9':
		f, err := strconv.ParseFloat(string(v), 64)
		const safe = 1<<53 - 1
		if err != nil || f != math.Trunc(f) || f > safe || f < -safe {
			return "", false
		}
		return strconv.FormatInt(int64(f), 10), true
	}
	return "", false
}

// sameValue compares a decoded header with a body value; integers compare
// by value ("1.0" and "1" are the same number).
func sameValue(header, body string) bool {
	if header == body {
		return true
	}
	bi, err := strconv.ParseInt(body, 10, 64)
	if err != nil {
		return false
	}
	f, err := strconv.ParseFloat(header, 64)
	return err == nil && f == math.Trunc(f) && int64(f) == bi
}

// encodeValue writes s as a header value: as it is when it is plain
// printable ASCII, else Base64 in the =?base64?...?= wrapper (SEP-2243).
func encodeValue(s string) string {
	need := s != "" && (s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t') ||
		strings.HasPrefix(s, b64Prefix) && strings.HasSuffix(s, b64Suffix)
	for i := 0; i < len(s) && !need; i++ {
		need = s[i] < 0x20 || s[i] > 0x7e
	}
	if need {
		return b64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + b64Suffix
	}
	return s
}

func decodeValue(v string) (string, bool) {
	if enc, ok := strings.CutPrefix(v, b64Prefix); ok {
		if enc, ok = strings.CutSuffix(enc, b64Suffix); ok {
			b, err := base64.StdEncoding.DecodeString(enc)
			return string(b), err == nil
		}
	}
	return v, true
}

// member returns the raw value of key in a JSON object, or nil.
func member(obj []byte, key string) []byte {
	if len(obj) == 0 {
		return nil
	}
	ms, err := jsonrpc.Members(obj)
	if err != nil {
		return nil
	}
	for _, m := range ms {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

func stringMember(obj []byte, key string) (string, bool) {
	return stringValue(member(obj, key))
}

// stringValue decodes a raw JSON string; false for nil or anything else.
func stringValue(raw []byte) (string, bool) {
	if raw == nil {
		return "", false
	}
	s, err := jsonrpc.DecodeString(raw)
	return s, err == nil
}
