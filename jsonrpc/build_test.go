package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestBuilders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		got  []byte
		want string
		kind Kind
	}{
		{"request", NewRequest([]byte(`1.5`), "tools/list", nil),
			`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, Request},
		{"request with params", NewRequest([]byte(`"a"`), "tools/call", []byte(`{ "name" : "x" }`)),
			`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{ "name" : "x" }}`, Request},
		{"notification", NewNotification("notifications/initialized", nil),
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`, Notification},
		{"notification with params", NewNotification("notifications/cancelled", []byte(`{"requestId":9007199254740993}`)),
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993}}`, Notification},
		{"result", NewResult([]byte(`9007199254740993`), []byte(`{"tools":[]}`)),
			`{"jsonrpc":"2.0","id":9007199254740993,"result":{"tools":[]}}`, Response},
		{"nil result", NewResult([]byte(`1`), nil),
			`{"jsonrpc":"2.0","id":1,"result":null}`, Response},
		{"error", NewError([]byte(`"\u0061"`), -32001, "blocked by policy", nil),
			`{"jsonrpc":"2.0","id":"\u0061","error":{"code":-32001,"message":"blocked by policy"}}`, Response},
		{"error with data", NewError([]byte(`7`), -32602, "bad", []byte(`{"labels":["x"]}`)),
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad","data":{"labels":["x"]}}}`, Response},
		{"error with nil id", NewError(nil, -32700, "Parse error", nil),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, Response},
		{"escaped strings", NewNotification("a\"b\\c\n\r\t\b\f\x01\x1f\x7fé", nil),
			`{"jsonrpc":"2.0","method":"a\"b\\c\n\r\t\b\f\u0001\u001f` + "\x7fé" + `"}`, Notification},
		{"invalid UTF-8", NewNotification("a\xffb\xe2\x82", nil),
			`{"jsonrpc":"2.0","method":"a\ufffdb\ufffd\ufffd"}`, Notification},
	} {
		if string(tc.got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
		m, err := Peek(tc.got)
		if err != nil || m.Kind != tc.kind {
			t.Errorf("%s: Peek = %v, %v", tc.name, m.Kind, err)
		}
	}
}

func TestAppendStringMatchesDecoders(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "\x00\x1f\"\\/", "é😀\u2028", "\xff\xfe", "a\xe2\x82\xacb\xe2\x82", "\xed\xa0\x80"} {
		enc := appendString(nil, s)
		if bytes.IndexByte(enc, '\n') >= 0 {
			t.Errorf("%q encodes with a newline", s)
		}
		// Each invalid byte becomes one U+FFFD.
		var want []byte
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			want = utf8.AppendRune(want, r)
			i += n
		}
		got, err := DecodeString(enc)
		if err != nil || got != string(want) {
			t.Errorf("DecodeString(%s) = %q, %v; want %q", enc, got, err, want)
		}
		var viaJSON string
		if err := json.Unmarshal(enc, &viaJSON); err != nil || viaJSON != string(want) {
			t.Errorf("encoding/json reads %s as %q, %v", enc, viaJSON, err)
		}
	}
}
