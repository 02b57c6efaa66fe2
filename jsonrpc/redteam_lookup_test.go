package jsonrpc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestRedTeamLookupRefusesWhatMembersRefuses: inputs chosen to split
// Lookup from Members: a duplicate spelled with escapes, a duplicate past
// the eighth member (where nameSet switches to its map), a duplicate of a
// name Lookup is not asked for, invalid UTF-8 in a name or value, a lone
// surrogate, data after the object, an empty name, nesting at the limit
// and past it. Lookup must give Members' error or none, and each asked
// member's value. This held.
func TestRedTeamLookupRefusesWhatMembersRefuses(t *testing.T) {
	t.Parallel()
	many := func(extra string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := 0; i < 9; i++ {
			b.WriteString(`"k` + string(rune('a'+i)) + `":1,`)
		}
		b.WriteString(extra + "}")
		return b.String()
	}
	deep := func(n int) string { return `{"id":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}` }
	inputs := []string{
		`{"id":1,"i\u0064":2}`,
		`{"\u0069d":1,"id":2}`,
		`{"name":"a","nam\u0065":"b"}`,
		`{"_meta":{},"_meta":{}}`,
		`{"other":1,"other":2,"id":3}`,
		many(`"ka":2,"id":1`),
		many(`"id":1,"\u0069d":2`),
		many(`"id":1`),
		"{\"id\":\"\xff\"}",
		"{\"\xff\":1,\"id\":1}",
		`{"id":"\ud800"}`,
		`{"\udc00":1}`,
		`{"id":1} x`,
		`{"id":1}}`,
		`{"":1,"":2}`,
		`{"a\"b":1,"a\u0022b":2}`,
		`{"a\"b":1}`,
		` {"id" : 1 } `,
		deep(511), deep(512), deep(600),
		`[{"id":1}]`,
		`"id"`,
		``,
		`{"id":1,}`,
		`{"id":01}`,
		`{"id":-0,"name":1e5}`,
	}
	names := []string{"id", "name", "_meta", "a\"b", "", "ka"}
	for _, in := range inputs {
		ms, merr := Members([]byte(in))
		values := make([][]byte, len(names))
		for i := range values {
			values[i] = []byte("stale")
		}
		lerr := Lookup([]byte(in), names, values)
		if (lerr == nil) != (merr == nil) || lerr != nil && lerr.Error() != merr.Error() {
			t.Errorf("%q: Lookup %v, Members %v", in, lerr, merr)
			continue
		}
		for i, n := range names {
			var want []byte
			for _, m := range ms {
				if m.Key == n {
					want = m.Value
				}
			}
			if !bytes.Equal(values[i], want) || (values[i] == nil) != (want == nil) {
				t.Errorf("%q: Lookup %q = %q, Members %q", in, n, values[i], want)
			}
		}
	}
}

// TestRedTeamAppendIDKeyAgreesWithIDKey: ids that a hostile peer can
// spell many ways (escapes, whitespace, invalid UTF-8, lone surrogates,
// huge numbers, -0, exponents, literals cut short) get the same key from
// AppendIDKey, into an empty and a non-empty buffer, as from IDKey; and
// the buffer's earlier bytes are never rewritten. This held.
func TestRedTeamAppendIDKeyAgreesWithIDKey(t *testing.T) {
	t.Parallel()
	ids := []string{
		`"a"`, ` "a" `, "\t\"a\"\n", `"\u0061"`, `"a\/b"`, `"\\"`, `"\""`, `"\u00e9"`, `"é"`,
		"\"\xff\"", "\"\xc3\"", `"\ud800"`, `"\udc00\ud800"`, `"\ud83d\ude00"`, `"\u0000"`,
		`"a" "b"`, `"a"x`, `"a`, `"`, `""`,
		`-0`, `0`, `-0.0`, `1e5`, `1E+5`, `1e-5`, `01`, `1.`, `.1`, `-`, `+1`, `1e`, `1e+`,
		strings.Repeat("9", 400), "-" + strings.Repeat("1", 400) + ".5e-999",
		`null`, ` null `, `nul`, `nulll`, `null x`, `true`, `false`, `{}`, `[]`, ``, ` `,
		`NaN`, `Infinity`, `0x10`,
	}
	for _, id := range ids {
		want := IDKey([]byte(id))
		if got := string(AppendIDKey(nil, []byte(id))); got != want {
			t.Errorf("AppendIDKey(nil, %q) = %q, IDKey %q", id, got, want)
		}
		buf := make([]byte, 3, 64)
		copy(buf, "pre")
		if got := string(AppendIDKey(buf, []byte(id))); got != "pre"+want {
			t.Errorf("AppendIDKey(pre, %q) = %q, IDKey %q", id, got, want)
		}
	}
}

// TestLookupStrictRefusesCaseVariants: a member that Go's encoding/json
// would read as "task" (any case, the Kelvin sign for k, an escape) is
// ErrCaseVariant; the exact name is found; nothing else is.
func TestLookupStrictRefusesCaseVariants(t *testing.T) {
	t.Parallel()
	names := []string{"task", "resultType"}
	for in, want := range map[string]error{
		`{"task":{}}`:               nil,
		`{"content":[],"x":"Task"}`: nil,
		`{"Task":{}}`:               ErrCaseVariant,
		`{"TASK":1}`:                ErrCaseVariant,
		`{"tas\u212a":1}`:           ErrCaseVariant,
		"{\"tas\u212a\":1}":         ErrCaseVariant,
		`{"resulttype":"complete"}`: ErrCaseVariant,
		`{"\u0074ask":1}`:           nil,
		`{"resultType":"complete"}`: nil,
		`{"tasks":1,"taskId":"t1"}`: nil,
	} {
		values := make([][]byte, len(names))
		err := LookupStrict([]byte(in), names, values)
		if !errors.Is(err, want) || want == nil && err != nil {
			t.Errorf("LookupStrict(%s) = %v, want %v", in, err, want)
		}
	}
	values := make([][]byte, len(names))
	if err := LookupStrict([]byte(`{"\u0074ask":7,"resultType":"task"}`), names, values); err != nil || string(values[0]) != "7" || string(values[1]) != `"task"` {
		t.Errorf("escaped name: %q, %v", values, err)
	}
}

// TestCheckNamesRefusesCaseVariants: a configuration file decoded with
// encoding/json (case-insensitive names) is read one way only when no
// member equals a documented name up to case without being it (known gap
// 10: {"command":["good"],"Command":["evil"]} runs evil).
func TestCheckNamesRefusesCaseVariants(t *testing.T) {
	names := []string{"command", "posture"}
	for _, tc := range []struct {
		obj string
		ok  bool
	}{
		{`{"command":["good"],"posture":"guard"}`, true},
		{`{"command":["good"],"other":1}`, true}, // unknown members are the decoder's to refuse
		{`{"command":["good"],"Command":["evil"]}`, false},
		{`{"COMMAND":["evil"]}`, false},
		{`{"po\u017fture":"monitor"}`, false}, // the long s folds to s
		{`{"command":1,"command":2}`, false},
		{`[1]`, false},
	} {
		if err := CheckNames([]byte(tc.obj), names); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.obj, err, tc.ok)
		}
	}
}
