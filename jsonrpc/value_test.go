package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMembersVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadValueVectors(t).Members {
		t.Run(v.Name, func(t *testing.T) {
			in := []byte(v.Input)
			got, err := Members(in)
			checkFails(t, err, v.Fails)
			if v.Fails != "" {
				if got != nil {
					t.Errorf("members on error: %v", got)
				}
				return
			}
			if len(got) != len(v.Members) {
				t.Fatalf("got %d members, want %d", len(got), len(v.Members))
			}
			for i, m := range got {
				if m.Key != v.Members[i][0] || string(m.Value) != v.Members[i][1] {
					t.Errorf("member %d = %q: %q, want %q: %q", i, m.Key, m.Value, v.Members[i][0], v.Members[i][1])
				}
				if !aliases(in, m.Value) {
					t.Errorf("member %d value does not alias the input", i)
				}
			}
		})
	}
}

func TestElementsVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadValueVectors(t).Elements {
		t.Run(v.Name, func(t *testing.T) {
			in := []byte(v.Input)
			got, err := Elements(in)
			checkFails(t, err, v.Fails)
			if v.Fails != "" {
				return
			}
			if len(got) != len(v.Elements) {
				t.Fatalf("got %d elements, want %d", len(got), len(v.Elements))
			}
			for i, e := range got {
				if string(e) != v.Elements[i] {
					t.Errorf("element %d = %q, want %q", i, e, v.Elements[i])
				}
				if !aliases(in, e) {
					t.Errorf("element %d does not alias the input", i)
				}
			}
		})
	}
}

func TestDecodeStringVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadValueVectors(t).Strings {
		t.Run(v.Name, func(t *testing.T) {
			got, err := DecodeString([]byte(v.Input))
			checkFails(t, err, v.Fails)
			if got != v.Value {
				t.Errorf("DecodeString = %q, want %q", got, v.Value)
			}
		})
	}
}

func TestBatchElementsPeek(t *testing.T) {
	t.Parallel()
	batch := []byte(`[ {"jsonrpc":"2.0","id":1.5,"method":"ping"} , {"jsonrpc":"2.0","method":"n"}, {"id":1}]`)
	m, err := Peek(batch)
	if err != nil || m.Kind != Batch {
		t.Fatalf("Peek = %v, %v", m.Kind, err)
	}
	els, err := Elements(batch)
	if err != nil || len(els) != 3 {
		t.Fatalf("Elements = %d, %v", len(els), err)
	}
	want := []Kind{Request, Notification, Invalid}
	for i, e := range els {
		got, err := Peek(e)
		if got.Kind != want[i] || (err != nil) != (want[i] == Invalid) {
			t.Errorf("element %d: %v, %v", i, got.Kind, err)
		}
	}
	if m, _ := Peek(els[0]); string(m.ID) != "1.5" {
		t.Errorf("element id = %s", m.ID)
	}
}

func TestNestingLimit(t *testing.T) {
	t.Parallel()
	deep := func(n int) []byte {
		b := make([]byte, 0, 2*n)
		for range n {
			b = append(b, '[')
		}
		for range n {
			b = append(b, ']')
		}
		return b
	}
	if _, err := Elements(deep(maxDepth)); err != nil {
		t.Errorf("depth %d: %v", maxDepth, err)
	}
	if _, err := Elements(deep(maxDepth + 1)); !errors.Is(err, ErrSyntax) {
		t.Errorf("depth %d: %v", maxDepth+1, err)
	}
	obj := []byte(`{"a":` + string(deep(maxDepth-1)) + `}`)
	if _, err := Members(obj); err != nil {
		t.Errorf("object at depth %d: %v", maxDepth, err)
	}
	obj = []byte(`{"a":` + string(deep(maxDepth)) + `}`)
	if _, err := Members(obj); !errors.Is(err, ErrSyntax) {
		t.Errorf("object at depth %d: %v", maxDepth+1, err)
	}
	// Objects and arrays interleaved use the same stack.
	var b []byte
	for range maxDepth / 2 {
		b = append(b, `{"a":[`...)
	}
	for range maxDepth / 2 {
		b = append(b, `]}`...)
	}
	if _, err := Members(b); err != nil {
		t.Errorf("interleaved: %v", err)
	}
}

// TestScanStringEveryPosition puts each kind of special byte at every
// position of strings around the eight-byte fast path and compares
// DecodeString with encoding/json plus the UTF-8 rule.
func TestScanStringEveryPosition(t *testing.T) {
	t.Parallel()
	specials := []string{`"`, `\`, `\n`, `\u00e9`, "\x00", "\x01", "\x1f", "\x7f", "\x80", "\xff", "é", "\xe2\x82", "😀", " "}
	for n := range 40 {
		for p := 0; p <= n; p++ {
			for _, sp := range specials {
				body := strings.Repeat("a", p) + sp + strings.Repeat("b", n-p)
				in := []byte(`"` + body + `"`)
				got, err := DecodeString(in)
				var want string
				jerr := json.Unmarshal(in, &want)
				ok := jerr == nil && utf8.Valid(in)
				if ok != (err == nil) || got != map[bool]string{true: want}[ok] {
					t.Fatalf("DecodeString(%q) = %q, %v; encoding/json %q, %v", in, got, err, want, jerr)
				}
			}
		}
	}
}

// TestScanUTF8MatchesStandardLibrary compares the string scanner's UTF-8
// check with unicode/utf8 on every two-byte sequence and on every lead and
// second byte of three- and four-byte ones.
func TestScanUTF8MatchesStandardLibrary(t *testing.T) {
	t.Parallel()
	check := func(seq []byte) {
		if bytes.ContainsAny(seq, "\"\\") {
			return // quotes and escapes are tested elsewhere
		}
		in := append(append([]byte{'"'}, seq...), '"')
		_, _, err := scanString(in, 0)
		want := utf8.Valid(seq) && !hasControl(seq)
		if (err == nil) != want {
			t.Fatalf("scanString(% x): %v, want valid %v", seq, err, want)
		}
	}
	for a := range 256 {
		for b := range 256 {
			check([]byte{byte(a), byte(b)})
			if a >= 0xe0 {
				for _, c := range []byte{0x7f, 0x80, 0xbf, 0xc0} {
					check([]byte{byte(a), byte(b), c})
					check([]byte{byte(a), byte(b), c, 0x80})
					check([]byte{byte(a), byte(b), 0x80, c})
				}
			}
		}
	}
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

func TestCheckUniqueRefusesRepeatedNamesAtAnyDepth(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"a":1,"b":{"c":[{"d":1,"e":2}]}}`, true},
		{`[1,"x",{"a":{}}]`, true},
		{`"s"`, true},
		{`{"a":1,"a":2}`, false},
		{`{"a":1,"\u0061":2}`, false},
		{`{"x":{"instructions":"a","instructions":"b"}}`, false},
		{`[{"ok":1},{"k":1,"k":1}]`, false},
		{`{"a":[[[{"z":1,"z":1}]]]}`, false},
		{`{"a":1`, false},
		{`{"a":1} x`, false},
	} {
		err := CheckUnique([]byte(tc.in))
		if (err == nil) != tc.ok {
			t.Errorf("CheckUnique(%s) = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}

// TestLookupUnaliased: a member a lenient decoder takes for a looked-up
// name (another case, '_' or '-' dropped or added) is refused, not read
// as another member; exact names are read as Lookup reads them.
func TestLookupUnaliased(t *testing.T) {
	t.Parallel()
	names := []string{"traceparent", "_meta", "stringValue"}
	for _, c := range []struct {
		obj  string
		want error
	}{
		{`{"traceparent":"a","_meta":{},"stringValue":"s","other":1}`, nil},
		{`{"Traceparent":"a"}`, ErrAlias},
		{`{"trace-parent":"a"}`, ErrAlias},
		{`{"trace_parent":"a"}`, ErrAlias},
		{`{"meta":{}}`, ErrAlias},
		{`{"_META":{}}`, ErrAlias},
		{`{"string_value":"s"}`, ErrAlias},
		{`{"trace\u017fparent":"a"}`, nil}, // not a fold of traceparent: no s in it
		{`{"tracepar\u212aent":"a"}`, nil},
	} {
		v := make([][]byte, len(names))
		err := LookupUnaliased([]byte(c.obj), names, v)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.obj, err, c.want)
		}
	}
	v := make([][]byte, len(names))
	if err := LookupUnaliased([]byte(`{"traceparent":"a","traceparent":"b"}`), names, v); err == nil {
		t.Error("a name twice was read")
	}
	if err := LookupUnaliased([]byte(`{"traceparent":"a","_meta":{"x":1}}`), names, v); err != nil || string(v[0]) != `"a"` || string(v[1]) != `{"x":1}` || v[2] != nil {
		t.Errorf("exact names: %q, %v", v, err)
	}
}

// membersKnowingCases: an object read first, whose _meta is then known,
// and one read knowing it.
var membersKnowingCases = []struct{ prior, obj string }{
	{`{"_meta":{"a":1},"x":2}`, `{"_meta":{"a":1},"x":2}`},
	{`{"_meta":{"a":1},"x":2}`, `{"x":2, "_meta": {"a":1} }`},
	{`{"_meta":{"a":1}}`, `{"_meta":{"a":1}}}`},
	{`{"_meta":{"a":1}}`, `{"_meta":{"a":1}`},
	{`{"_meta":{"a":1}}`, `{"_meta":{"a":1},"_meta":{"a":1}}`},
	{`{"_meta":{"a":1}}`, `{"_meta":{"a":1}x}`},
	{`{"_meta":{"a":1}}`, `{"\u005fmeta":{"a":1}}`},
	{`{"_meta":{"a":1}}`, `{"_META":{"a":1}}`},
	{`{"_meta":{"a":"\u00e9"}}`, `{"_meta":{"a":"\u00e9"},"b":[1,2]}`},
	{`{"_meta":"s"}`, `{"_meta":"s"}`},
	{`{"_meta":1}`, `{"_meta":12}`},
	{`{"_meta":{}}`, `{"_meta":{}, "_meta":{}}`},
}

// checkMembersKnowing reads prior, takes its _meta as known, and checks
// that MembersKnowing reads obj exactly as Members does.
func checkMembersKnowing(t *testing.T, prior, obj []byte) {
	t.Helper()
	var known string
	if ms, err := Members(prior); err == nil {
		for _, m := range ms {
			if m.Key == "_meta" {
				known = string(m.Value)
			}
		}
	}
	got, gerr := MembersKnowing(obj, "_meta", known)
	want, werr := Members(obj)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) || len(got) != len(want) {
		t.Fatalf("knowing %q: MembersKnowing(%q) = %d members, %v; Members %d, %v", known, obj, len(got), gerr, len(want), werr)
	}
	for i := range got {
		if got[i].Key != want[i].Key || !bytes.Equal(got[i].Value, want[i].Value) {
			t.Fatalf("knowing %q: MembersKnowing(%q) member %d = %q: %q; Members %q: %q", known, obj, i, got[i].Key, got[i].Value, want[i].Key, want[i].Value)
		}
	}
}

// TestMembersKnowingIsMembers: knowing a member's value changes nothing
// that is read.
func TestMembersKnowingIsMembers(t *testing.T) {
	t.Parallel()
	for _, c := range membersKnowingCases {
		checkMembersKnowing(t, []byte(c.prior), []byte(c.obj))
	}
}

func FuzzMembersKnowing(f *testing.F) {
	for _, c := range membersKnowingCases {
		f.Add([]byte(c.prior), []byte(c.obj))
	}
	f.Fuzz(func(t *testing.T, prior, obj []byte) {
		checkMembersKnowing(t, prior, obj)
		// And obj after the known value, where it is used.
		if ms, err := Members(prior); err == nil && len(ms) > 0 && ms[0].Key == "_meta" {
			checkMembersKnowing(t, prior, append([]byte(`{"_meta":`+string(ms[0].Value)), obj...))
		}
	})
}
