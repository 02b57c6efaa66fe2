package pin

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
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
	// the whole record, instructions included, and never regrown (a
	// regrown buffer is twice the size it outgrew; the allocator rounds a
	// small one up to its size class).
	if got, _ := encodeRecord(r); cap(got) > len(got)+len(got)/4 {
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
		// Written to a file (a writer that is not a bytes.Buffer), the
		// bytes are the same.
		var file bytes.Buffer
		serr := writeRecord(struct{ io.Writer }{&file}, r)
		if (serr != nil) != (werr != nil) || werr == nil && !bytes.Equal(file.Bytes(), want) {
			t.Errorf("%s: writeRecord to a file = %q, %v\nencoding/json = %q, %v", name, file.Bytes(), serr, want, werr)
		}
	}
	// A definition that is not JSON fails as it does in encoding/json.
	r.Definitions["cd"] = json.RawMessage(`{"a":`)
	if _, err := encodeRecord(r); err == nil {
		t.Error("a definition that is not JSON was encoded")
	}
}

// TestRecordFileReadsBackAsWritten: the record file a commit writes (see
// writeRecordFile) is encodeRecord's bytes, its hash is theirs, and what
// it read back is what decodeRecord reads from those bytes.
func TestRecordFileReadsBackAsWritten(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	id := IdentityForName("readback")
	observe(t, s, id, profileA, contractOf(ptrTo("Be <brief>."), tool(t, "a", "A."), tool(t, "b", "B.")), Guard)
	observe(t, s, id, profileA, contractOf(nil, tool(t, "a", "A, changed.")), Guard)
	data, err := os.ReadFile(filepath.Join(s.Dir(), id.ID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeRecord(id.ID, data)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "record.json")
	digest, err := writeRecordFile(path, id.ID, r)
	if err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(written, data) || digest != fileHash(data) {
		t.Fatalf("the record file is not the stored record's bytes, or its hash is not theirs:\n%s\n%s", written, data)
	}
	back, err := readBack(id.ID, bytes.NewReader(written), r.Definitions)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("read back\n%#v\ndecodeRecord reads\n%#v", back, r)
	}
}

// TestTamperedRecordFileDoesNotReadBack: readBack checks the file it reads,
// not the record that was meant: a definition changed on the way, data
// after the record or a record that does not check are refused.
func TestTamperedRecordFileDoesNotReadBack(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	id := IdentityForName("tampered-readback")
	observe(t, s, id, profileA, contractOf(nil, tool(t, "a", "A."), tool(t, "b", "B.")), Guard)
	data, err := os.ReadFile(filepath.Join(s.Dir(), id.ID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeRecord(id.ID, data)
	if err != nil {
		t.Fatal(err)
	}
	for name, file := range map[string][]byte{
		"a definition changed": bytes.Replace(data, []byte(`"A."`), []byte(`"X."`), 1),
		"data after":           append(bytes.Clone(data), "{}\n"...),
		"no final newline":     bytes.TrimSuffix(data, []byte("\n")),
		"another server":       bytes.Replace(data, []byte(id.ID), []byte(IdentityForName("other").ID), 1),
		"a repeated member":    bytes.Replace(data, []byte(`{"version":2,`), []byte(`{"version":2,"version":1,`), 1),
	} {
		if _, err := readBack(id.ID, bytes.NewReader(file), r.Definitions); err == nil {
			t.Errorf("%s: read back", name)
		}
	}
	// A record that does not check is not left on disk.
	bad := *r
	bad.Label = ""
	path := filepath.Join(t.TempDir(), "record.json")
	if _, err := writeRecordFile(path, id.ID, &bad); err == nil {
		t.Fatal("a record without a label was written")
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the refused record file was left: %v", err)
	}
}
