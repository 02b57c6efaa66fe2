package egress

import (
	"bytes"
	"math/rand"
	"net/http"
	"testing"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// redTeamParams are params built to make one pass over the members read
// something the per-member lookups did not: duplicate and case-variant
// names, escapes in names, _meta twice, nested decoys, params that are
// not an object, bad JSON after a good first member.
var redTeamParams = []string{
	`{"Name":"a"}`,
	`{"NAME":"a","name":"b"}`,
	`{"n\u0061me":"a"}`,
	`{"\u006e\u0061\u006d\u0065":"a"}`,
	`{"name\u0000":"a"}`,
	`{"name ":"a"}`,
	`{"n\u0061me":"a","n\u0061me":"b"}`,
	`{"name":"a","nam\u0065":"b"}`,
	`{"_meta":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
	`{"_m\u0065ta":{"io.modelcontextprotocol/protocolVersion":"x"}}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":"a","io.modelcontextprotocol/protocolVersion":"b"}}`,
	`{"_meta":{"io.modelcontextprotocol\/protocolVersion":"a"}}`,
	`{"_meta":[{"io.modelcontextprotocol/protocolVersion":"a"}]}`,
	`{"_meta":"{\"io.modelcontextprotocol/protocolVersion\":\"a\"}"}`,
	`{"arguments":{"a":1},"arguments":{"a":2}}`,
	`{"arguments":{"a":1,"a":2},"name":"t"}`,
	`{"name":"t","arguments":{"a":1}} `,
	` {"name":"t"}`,
	`{"name":"t"}{"name":"u"}`,
	`{"name":"t"} {"name":"u"}`,
	`{"name":"t","x":{"name":"inner"}}`,
	`{"x":{"name":"inner"}}`,
	`{"name":"t","name":"t"}`,
	`{"name":"\ud800"}`,
	`{"name":"a\u0000b"}`,
	`{"uri":"file:///a","uri":"file:///b"}`,
	`{"uri":1}`,
	`{"name":null}`,
	`{"name":"t",`,
	`{"name":"t"`,
	`{"name":"t",}`,
	`{name:"t"}`,
	`{'name':'t'}`,
	`[{"name":"t"}]`,
	`null`,
	`true`,
	`1`,
	`"{\"name\":\"t\"}"`,
	"{\"name\":\"t\"}\x00",
	"\ufeff{\"name\":\"t\"}",
	"{\"name\":\"t\xff\"}",
	"{\"na\xffme\":\"t\"}",
	`{"name":"t","arguments":{"a":1},"_meta":{"progressToken":1},"uri":"u","name":"dup"}`,
}

// redTeamMutate returns params with one byte changed, deleted or doubled.
func redTeamMutate(r *rand.Rand, params string) string {
	if params == "" {
		return `{`
	}
	b := []byte(params)
	i := r.Intn(len(b))
	switch r.Intn(4) {
	case 0:
		b[i] = `{}[]",:\ nu0aem_`[r.Intn(16)]
	case 1:
		b = append(b[:i:i], b[i+1:]...)
	case 2:
		b = append(b[:i+1:i+1], b[i:]...)
	default:
		j := r.Intn(len(b))
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// TestRedTeamReadParamsDuplicateEscapedAndCaseVariantNames: for params
// built to split the one-pass read from the lookups it replaced (and
// thousands of mutations of them), every member, the name the headers
// carry and the protocol version in _meta are what the lookups say.
func TestRedTeamReadParamsDuplicateEscapedAndCaseVariantNames(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(1))
	all := append([]string(nil), redTeamParams...)
	for range 20000 {
		all = append(all, redTeamMutate(r, all[r.Intn(len(all))]))
	}
	for _, params := range all {
		raw := []byte(params)
		p := readParams(raw)
		for key, got := range map[string][]byte{"_meta": p.meta, "name": p.name, "uri": p.uri, "arguments": p.arguments} {
			if want := member(raw, key); !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Fatalf("%q: %s = %q, member says %q", params, key, got, want)
			}
		}
		gotV, _ := stringMember(p.meta, metaVersionKey)
		if want := MetaVersion(raw); gotV != want {
			t.Fatalf("%q: version %q, MetaVersion says %q", params, gotV, want)
		}
		for _, method := range []string{"tools/call", "prompts/get", "resources/read", "tools/list", ""} {
			gotName, gotOK := p.nameOf(method)
			var wantName string
			var wantOK bool
			switch method {
			case "tools/call", "prompts/get":
				wantName, wantOK = stringMember(raw, "name")
			case "resources/read":
				wantName, wantOK = stringMember(raw, "uri")
			}
			if gotName != wantName || gotOK != wantOK {
				t.Fatalf("%q: %s names %q %v, lookups say %q %v", params, method, gotName, gotOK, wantName, wantOK)
			}
		}
	}
}

// TestRedTeamCheckHeadersAgreesWithSetHeadersOnHostileParams: headers
// SetHeaders derives from a hostile body pass CheckHeaders for that same
// body, and headers derived from the body's first duplicate (what a
// first-wins reader would take) never pass for a body with duplicates.
func TestRedTeamCheckHeadersAgreesWithSetHeadersOnHostileParams(t *testing.T) {
	t.Parallel()
	b := NewBindings()
	b.Learn([]byte(`{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}}]}`))
	for _, params := range append(redTeamParams,
		`{"name":"t","arguments":{"a":"x"},"arguments":{"a":"y"}}`,
		`{"name":"t","arguments":{"a":"x","a":"y"}}`,
		`{"name":"t","n\u0061me":"u","arguments":{"a":"x"}}`,
		`{"name":"t","arguments":{"\u0061":"x"}}`,
	) {
		for _, method := range []string{"tools/call", "prompts/get", "resources/read"} {
			m := jsonrpc.Message{Kind: jsonrpc.Request, Method: method, Params: []byte(params)}
			h := http.Header{}
			h.Set(versionHeader, ModernVersion)
			SetHeaders(h, m, b)
			if v := MetaVersion(m.Params); v != "" {
				h.Set(versionHeader, v)
			}
			if err := CheckHeaders(h, m, b); err != nil {
				t.Errorf("%s %s: headers derived from the body refused: %v (%v)", method, params, err, h)
			}
			if _, err := jsonrpc.Members(m.Params); err != nil {
				continue
			}
			// Valid params: a decoy Mcp-Name must be refused.
			if _, ok := readParams(m.Params).nameOf(method); ok {
				h.Set(nameHeader, "decoy")
				if CheckHeaders(h, m, b) == nil {
					t.Errorf("%s %s: a decoy Mcp-Name passed", method, params)
				}
			}
		}
	}
}

// FuzzRedTeamReadParamsIsMember: the one-pass read agrees with the
// member-by-member lookups on any params (seeded with redTeamParams).
func FuzzRedTeamReadParamsIsMember(f *testing.F) {
	for _, p := range redTeamParams {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p := readParams(raw)
		for key, got := range map[string][]byte{"_meta": p.meta, "name": p.name, "uri": p.uri, "arguments": p.arguments} {
			if want := member(raw, key); !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Fatalf("%q: %s = %q, member says %q", raw, key, got, want)
			}
		}
		if v, _ := stringMember(p.meta, metaVersionKey); v != MetaVersion(raw) {
			t.Fatalf("%q: version %q, MetaVersion says %q", raw, v, MetaVersion(raw))
		}
	})
}
