package egress

import (
	"bytes"
	"testing"
)

// TestReadParamsIsMember: the one pass over params that the header checks
// make finds what a lookup of each member finds, for valid params and for
// params that are not a valid object (duplicate names, bad JSON, an array).
func TestReadParamsIsMember(t *testing.T) {
	t.Parallel()
	for _, params := range []string{
		``,
		`{}`,
		`{"name":"echo","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"uri":"file:///x","_meta":{}}`,
		`{ "name" : "a\u0062" , "arguments" : [1, {"name":"inner"}] }`,
		`{"name":"a","name":"b"}`,
		`{"n\u0061me":"a","name":"b"}`,
		`{"name":"a",}`,
		`["name","a"]`,
		`"name"`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":1}}`,
	} {
		p := readParams([]byte(params))
		for key, got := range map[string][]byte{"_meta": p.meta, "name": p.name, "uri": p.uri, "arguments": p.arguments} {
			if want := member([]byte(params), key); !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("%s: %s = %q, member says %q", params, key, got, want)
			}
		}
		for _, method := range []string{"tools/call", "prompts/get", "resources/read", "tools/list"} {
			gotName, gotOK := p.nameOf(method)
			var wantName string
			var wantOK bool
			switch method {
			case "tools/call", "prompts/get":
				wantName, wantOK = stringMember([]byte(params), "name")
			case "resources/read":
				wantName, wantOK = stringMember([]byte(params), "uri")
			}
			if gotName != wantName || gotOK != wantOK {
				t.Errorf("%s: %s names %q %v, want %q %v", params, method, gotName, gotOK, wantName, wantOK)
			}
		}
	}
}
