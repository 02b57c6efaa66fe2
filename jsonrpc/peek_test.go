package jsonrpc

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func kindOf(name string) Kind {
	for k := Invalid; k <= Batch; k++ {
		if k.String() == name {
			return k
		}
	}
	return -1
}

func checkFails(t *testing.T, err error, fails string) {
	t.Helper()
	switch fails {
	case "":
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	case "syntax":
		if !errors.Is(err, ErrSyntax) {
			t.Fatalf("error = %v, want ErrSyntax", err)
		}
	case "invalid":
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("error = %v, want ErrInvalid", err)
		}
	default:
		t.Fatalf("bad fails %q in vector", fails)
	}
}

func checkRaw(t *testing.T, field string, got []byte, want *string) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Errorf("%s = %q, want absent", field, got)
	case want != nil && got == nil:
		t.Errorf("%s absent, want %q", field, *want)
	case want != nil && string(got) != *want:
		t.Errorf("%s = %q, want %q", field, got, *want)
	}
}

func TestPeekVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadPeekVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			frame := v.frame(t)
			m, err := Peek(frame)
			checkFails(t, err, v.Fails)
			if want := kindOf(v.Kind); m.Kind != want {
				t.Errorf("Kind = %v, want %v", m.Kind, v.Kind)
			}
			if m.Method != v.Method {
				t.Errorf("Method = %q, want %q", m.Method, v.Method)
			}
			checkRaw(t, "ID", m.ID, v.ID)
			checkRaw(t, "Params", m.Params, v.Params)
			checkRaw(t, "Result", m.Result, v.Result)
			checkRaw(t, "Error", m.Error, v.Error)
			if v.ID != nil && err == nil {
				if got := IDKey(m.ID); got != v.IDKey {
					t.Errorf("IDKey = %q, want %q", got, v.IDKey)
				}
			}
			for _, raw := range [][]byte{m.ID, m.Params, m.Result, m.Error} {
				if raw != nil && !aliases(frame, raw) {
					t.Errorf("%q does not alias the frame", raw)
				}
			}
		})
	}
}

// aliases reports whether sub is a subslice of s.
func aliases(s, sub []byte) bool {
	if len(sub) == 0 {
		return false
	}
	for i := range s {
		if &s[i] == &sub[0] {
			return len(s)-i >= len(sub)
		}
	}
	return false
}

// errText is the shape of every error message: fixed words and an offset.
var errText = regexp.MustCompile(`^jsonrpc: invalid (JSON|message): [a-zA-Z0-9 ,"./\\-]+( at offset \d+)?$`)

func TestErrorsDoNotEchoInput(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-4e1d"
	for _, v := range loadPeekVectors(t) {
		if v.Fails == "" {
			continue
		}
		_, err := Peek(v.frame(t))
		if !errText.MatchString(err.Error()) {
			t.Errorf("%s: error text %q", v.Name, err)
		}
	}
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"` + secret + `\x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"k":"` + secret + "\x01" + `"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","` + secret + `":1,"` + secret + `":2}`,
		`{"jsonrpc":"` + secret + `","id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x"}` + secret,
		secret,
	} {
		_, err := Peek([]byte(frame))
		if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("Peek(%q) error = %v", frame, err)
		}
	}
}

func TestPeekKeepsIDBytes(t *testing.T) {
	t.Parallel()
	for _, id := range []string{`1.5`, `9007199254740993`, `"\u0061"`, `-0`, `1e400`, `"é"`, `123456789012345678901234567890`} {
		frame := []byte(`{"jsonrpc":"2.0","id": ` + id + ` ,"method":"ping"}`)
		m, err := Peek(frame)
		if err != nil {
			t.Fatalf("Peek(%s): %v", frame, err)
		}
		if string(m.ID) != id {
			t.Errorf("ID = %s, want %s", m.ID, id)
		}
		reply := NewResult(m.ID, []byte(`{}`))
		r, err := Peek(reply)
		if err != nil || string(r.ID) != id || IDKey(r.ID) != IDKey(m.ID) {
			t.Errorf("reply %s: id %s, %v", reply, r.ID, err)
		}
	}
}

func TestPeekSyntaxBeforeSemantics(t *testing.T) {
	t.Parallel()
	// A frame that is both a duplicate and broken JSON is a parse error.
	_, err := Peek([]byte(`{"jsonrpc":"2.0","id":1,"id":2,"method":"x",}`))
	if !errors.Is(err, ErrSyntax) {
		t.Fatalf("err = %v, want ErrSyntax", err)
	}
}

func TestPeekManyMembers(t *testing.T) {
	t.Parallel()
	// Many unknown members take linear time and are all checked.
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","method":"x"`)
	key := func(i int) string { return strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strconv.Itoa(i) }
	for i := range 100000 {
		b.WriteString(`,"` + key(i) + `":1`)
	}
	b.WriteString("}")
	if _, err := Peek(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	dup := append(bytes.TrimSuffix(b.Bytes(), []byte("}")), `,"`+key(26)+`":2}`...)
	if _, err := Peek(dup); !errors.Is(err, ErrInvalid) {
		t.Fatalf("duplicate among many: %v", err)
	}
}

func TestPeekDoesNotAllocate(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris"}}}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Peek(frame); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Peek of a tools/call request allocates %v times", allocs)
	}
}

func TestIDKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ id, key string }{
		{`1`, "n:1"},
		{`1.0`, "n:1.0"},
		{`-1.5e3`, "n:-1.5e3"},
		{`"1"`, "s:1"},
		{`"\u0061"`, "s:a"},
		{`"a"`, "s:a"},
		{`"n:1"`, "s:n:1"},
		{`"null"`, "s:null"},
		{`null`, "null"},
		{` 7 `, "n:7"},
		{``, ""},
		{`true`, ""},
		{`{}`, ""},
		{`01`, ""},
		{`1 2`, ""},
		{`nul`, ""},
		{`null x`, ""},
		{`"\ud800"`, ""},
		{`"a`, ""},
	} {
		if got := IDKey([]byte(tc.id)); got != tc.key {
			t.Errorf("IDKey(%s) = %q, want %q", tc.id, got, tc.key)
		}
	}
}

func TestKindString(t *testing.T) {
	t.Parallel()
	for k, s := range map[Kind]string{Invalid: "invalid", Request: "request", Notification: "notification", Response: "response", Batch: "batch", 99: "invalid"} {
		if k.String() != s {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), k.String(), s)
		}
	}
}
