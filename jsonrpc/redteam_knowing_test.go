package jsonrpc

import (
	"strings"
	"testing"
)

// rtKnownValues are object values a first object may hold (valid or not
// for Members).
func rtKnownValues() []string {
	nest := func(k int) string { return strings.Repeat("[", k) + strings.Repeat("]", k) }
	return []string{
		`{}`, `{ }`, `{"a":1}`, `{"a" : 1 }`, `{"a":"\u00e9"}`, `{"a":"é"}`, `{"a":"\ud83d\ude00"}`,
		`{"a":1,"A":2}`, `{"a":{"b":1,"b":2}}`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}",
		`{"a":1e400}`, `{"a":-0}`, `{"a":01}`, `{"a":"\u0000"}`, "{\"a\":\"\x01\"}",
		`{"a":` + nest(maxDepth-3) + `}`, `{"a":` + nest(maxDepth-2) + `}`, `{"a":` + nest(maxDepth-1) + `}`,
		`{"a":` + nest(maxDepth) + `}`,
		`{"\u005fmeta":{}}`, `{"a":"}"}`, `{"a":"\"}"}`,
		`"s"`, `1`, `[]`, `null`, `{`, `{"a":}`, `{"a":1`,
	}
}

var rtKnowingTemplates = []string{
	`{"_meta":@K@}`,
	` { "_meta" :  @K@  } `,
	`{"x":1,"_meta":@K@,"y":[1]}`,
	`{"_meta":@K@,"_meta":@K@}`,
	`{"_meta":@K@,"\u005fmeta":@K@}`,
	`{"\u005fmeta":@K@,"_meta":@K@}`,
	`{"_meta":@K@,"_META":1}`,
	`{"_meta":@K@}x`,
	`{"_meta":@K@}}`,
	`{"_meta":@K@`,
	`{"_meta":@K@,}`,
	`{"_meta":@K@ "x":1}`,
	`{"_meta":@K@:1}`,
	`{"_meta":@K@]}`,
	`{"_meta":@K@"x"}`,
	`{"_meta":[@K@]}`,
	`{"x":{"_meta":@K@},"_meta":@K@}`,
	`{"_meta":@K@@K@}`,
	"{\"_meta\":@K@,\"\xff\":1}",
}

// TestRTMembersKnowingEveryPair: MembersKnowing knowing each value reads
// every object built around each other value as Members does.
func TestRTMembersKnowingEveryPair(t *testing.T) {
	ks := rtKnownValues()
	for _, known := range ks {
		for _, v := range ks {
			for _, tpl := range rtKnowingTemplates {
				obj := []byte(strings.ReplaceAll(tpl, "@K@", v))
				// known as the gate has it: a value Members returned.
				checkMembersKnowing(t, []byte(`{"_meta":`+known+`}`), obj)
				// and known as given, whether or not Members took it
				// (MembersKnowing is exported; its doc asks for a
				// value Members returned).
				checkKnowingAs(t, known, obj)
			}
		}
	}
}

// checkKnowingAs is checkMembersKnowing with known given directly. It
// reports only what a known that Members accepted may not change.
func checkKnowingAs(t *testing.T, known string, obj []byte) {
	t.Helper()
	if ms, err := Members([]byte(`{"_meta":` + known + `}`)); err != nil || len(ms) != 1 || string(ms[0].Value) != known {
		return
	}
	got, gerr := MembersKnowing(obj, "_meta", known)
	want, werr := Members(obj)
	if (gerr == nil) != (werr == nil) || len(got) != len(want) {
		t.Fatalf("knowing %.80q: MembersKnowing(%.200q) = %d, %v; Members %d, %v", known, obj, len(got), gerr, len(want), werr)
	}
	for i := range got {
		if got[i].Key != want[i].Key || string(got[i].Value) != string(want[i].Value) {
			t.Fatalf("knowing %.80q: member %d differs", known, i)
		}
	}
}

// FuzzRTMembersKnowingSpliced: the known value spliced into an object,
// after any whitespace and before any bytes, with other members before it.
func FuzzRTMembersKnowingSpliced(f *testing.F) {
	for _, k := range rtKnownValues() {
		f.Add([]byte(`{"_meta":`+k+`}`), []byte(" "), []byte(`}`), uint8(0))
		f.Add([]byte(`{"x":`+k+`}`), []byte(""), []byte(`,"_meta":1}`), uint8(1))
	}
	f.Fuzz(func(t *testing.T, prior, pre, suffix []byte, mode uint8) {
		ms, err := Members(prior)
		if err != nil {
			return
		}
		for _, m := range ms {
			if len(m.Value) == 0 || m.Value[0] != '{' {
				continue
			}
			known := string(m.Value)
			heads := []string{`{"_meta":`, `{"x":1,"_meta":`, `{"_meta":{},"_meta":`, `{"_META":1,"_meta":`}
			obj := []byte(heads[int(mode)%len(heads)] + string(pre) + known + string(suffix))
			got, gerr := MembersKnowing(obj, "_meta", known)
			want, werr := Members(obj)
			if rtErrText(gerr) != rtErrText(werr) || len(got) != len(want) {
				t.Fatalf("knowing %q: MembersKnowing(%q) = %d, %v; Members %d, %v", known, obj, len(got), gerr, len(want), werr)
			}
			for i := range got {
				if got[i].Key != want[i].Key || string(got[i].Value) != string(want[i].Value) {
					t.Fatalf("knowing %q: MembersKnowing(%q) member %d differs", known, obj, i)
				}
			}
		}
	})
}

func rtErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
