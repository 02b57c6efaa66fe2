package httpgw

import (
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// FuzzFilterTools: a tools/list answer is the server's text. Whatever it
// is, the filtered answer never lists a tool the caller may not see, and
// is one valid JSON value.
func FuzzFilterTools(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo"},{"name":"secret_admin"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"secret_admin","name":"echo"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo"}],"tools":[{"name":"secret_admin"}]}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"secret\u005fadmin"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		out, ok := filterTools(frame, func(n string) bool { return !strings.HasPrefix(n, "secret") })
		if !ok {
			return
		}
		if jsonrpc.CheckUnique(out) != nil {
			t.Fatalf("the filtered answer is not one unambiguous JSON value: %s", out)
		}
		res := member(out, "result")
		if res == nil {
			return
		}
		els, err := jsonrpc.Elements(member(res, "tools"))
		if err != nil {
			t.Fatalf("the filtered tools are not an array: %s", out)
		}
		for _, el := range els {
			if n, _ := stringMember(el, "name"); strings.HasPrefix(n, "secret") {
				t.Fatalf("a hidden tool was listed: %s", out)
			}
		}
	})
}
