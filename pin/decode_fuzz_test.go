package pin

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzDecodeMembersIsDecodeStrict checks that decoding a record member by
// member (decodeMembers) accepts exactly what decoding it as one value
// (decodeStrict) accepts, refuses the rest with the same error, and
// decodes to the same record.
func FuzzDecodeMembersIsDecodeStrict(f *testing.F) {
	s, err := Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	id := IdentityForName("members")
	observe(f, s, id, profileA, contractOf(ptrTo("Hi."), tool(f, "a", "A <b> & c."), tool(f, "b", "B.")), Guard)
	observe(f, s, id, profileA, contractOf(nil, tool(f, "a", "A, changed.")), Guard)
	data, err := os.ReadFile(filepath.Join(s.Dir(), id.ID+".json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	// The ambiguous forms the two must agree on: a repeated member, a
	// member named in another case, a repeated definition, null, types
	// that do not fit, trailing data.
	head, _, _ := bytes.Cut(data, []byte(`,"definitions":`))
	for _, tail := range []string{
		`,"definitions":{"00":{}},"definitions":{"11":[]}}`,
		`,"definitions":{"00":{}},"Definitions":{"11":[]}}`,
		`,"DEFINITIONS":{"00":{}},"definitions":null}`,
		`,"definitions":{"00":{},"00":null}}`,
		`,"definitions":{"00":1 }}   `,
		`,"definitions":[]}`,
		`,"definitions":"x"}`,
		`,"definitions":{"00":{}}}}`,
		`,"definitions":{"00":{}}} {}`,
		`,"definitions":{"00":{}},"unknown":1}`,
		`,"label":1}`,
		`,"profiles":{"a":null},"profiles":{"b":null}}`,
		`,"version":"2"}`,
		`,"definitions":{"\u0030\u0030":{}, "a\ud800":{}}}`,
	} {
		f.Add(append(append([]byte{}, head...), tail...))
	}
	for _, s := range []string{`null`, `null x`, `[]`, `{}`, `{"version":2}`, `"x"`, `{"version":2,}`, `{"version" 2}`, ` {"ID":"a","id":"b"} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, got := new(record), new(record)
		werr := decodeStrict(data, want)
		gerr := decodeMembers(data, got)
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("decodeStrict: %v, decodeMembers: %v", werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("decodeStrict decodes\n%#v\ndecodeMembers\n%#v", want, got)
		}
	})
}

// FuzzReadBackIsDecodeRecord checks that reading a record file as a
// stream with known texts (readBack: the commit's read-back and a
// session's read of its record) accepts nothing that decodeRecord refuses,
// and reads what it accepts as the same record; a known text is used only
// for a definition of the same bytes.
func FuzzReadBackIsDecodeRecord(f *testing.F) {
	s, err := Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	id := IdentityForName("readback")
	observe(f, s, id, profileA, contractOf(ptrTo("Hi."), tool(f, "a", "A <b> & c."), tool(f, "b", "B.")), Guard)
	observe(f, s, id, profileA, contractOf(nil, tool(f, "a", "A, changed.")), Guard)
	data, err := os.ReadFile(filepath.Join(s.Dir(), id.ID+".json"))
	if err != nil {
		f.Fatal(err)
	}
	seed, err := decodeRecord(id.ID, data)
	if err != nil {
		f.Fatal(err)
	}
	// The texts a session would know: the record's own, and one that is
	// not what its key names.
	known := map[string]json.RawMessage{}
	for digest, raw := range seed.Definitions {
		known[digest] = raw
	}
	for digest := range seed.Definitions {
		known[digest] = json.RawMessage(`{"name":"other"}`)
		break
	}
	f.Add(data)
	f.Add(append(bytes.Clone(data), '\n'))
	f.Add(bytes.TrimSuffix(data, []byte("\n")))
	f.Add(bytes.Replace(data, []byte(`"A, changed."`), []byte(`"A, changed!"`), 1))
	f.Add([]byte(`{"version":2}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := readBack(id.ID, bytes.NewReader(data), known)
		if err != nil {
			return
		}
		want, err := decodeRecord(id.ID, data)
		if err != nil {
			t.Fatalf("readBack accepted what decodeRecord refuses (%v)", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("readBack reads\n%#v\ndecodeRecord\n%#v", got, want)
		}
	})
}
