package pin

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestEncodeRecordIsTheEncoders: the record bytes encodeRecord writes are
// exactly those of encoding/json (SetEscapeHTML(false)), for the records
// a store writes and for the corner cases of the hand-written part: no or
// empty maps, definitions with insignificant white space, keys that are
// not hex (which fall back to encoding/json), text JSON escapes.
func TestEncodeRecordIsTheEncoders(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	id := IdentityForName("encode")
	observe(t, s, id, profileA, contractOf(ptrTo("Be <brief> & \u2028 kind."), tool(t, "a", "A."), tool(t, "b", "B \"quoted\".")), Guard)
	data, err := os.ReadFile(filepath.Join(s.Dir(), id.ID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeRecord(id.ID, data)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := encodeRecord(r); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the stored record re-encodes differently (%v):\n%s\n%s", err, got, data)
	}
	// Canonical definitions are compact already: the buffer is sized for
	// the whole record, instructions included, and never regrown.
	if got, _ := encodeRecord(r); cap(got) > len(got)+8 {
		t.Errorf("encodeRecord's buffer is %d bytes for a %d-byte record", cap(got), len(got))
	}
	variants := map[string]func(r *record){
		"as stored":            func(*record) {},
		"no definitions":       func(r *record) { r.Definitions = nil },
		"empty definitions":    func(r *record) { r.Definitions = map[string]json.RawMessage{} },
		"no instructions":      func(r *record) { r.Instructions = nil },
		"null definition":      func(r *record) { r.Definitions["00"] = nil },
		"spaced definition":    func(r *record) { r.Definitions["ab"] = json.RawMessage(" { \"a\" : [ 1 , 2 ] ,\n\"b\":\"<x>\" } ") },
		"non-hex key":          func(r *record) { r.Definitions["<Key>"] = json.RawMessage(`{}`) },
		"escapes in label":     func(r *record) { r.Label = "a<b>&\u2028\"\\" },
		"instructions escapes": func(r *record) { r.Instructions["k"] = "line\n<tab>\t\u2029" },
	}
	for name, change := range variants {
		r, err := decodeRecord(id.ID, data)
		if err != nil {
			t.Fatal(err)
		}
		change(r)
		got, gerr := encodeRecord(r)
		want, werr := encodeJSON(r)
		if (gerr != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%s: encodeRecord = %q, %v\nencoding/json = %q, %v", name, got, gerr, want, werr)
		}
	}
	// A definition that is not JSON fails as it does in encoding/json.
	r.Definitions["cd"] = json.RawMessage(`{"a":`)
	if _, err := encodeRecord(r); err == nil {
		t.Error("a definition that is not JSON was encoded")
	}
}
