package pin

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestStreamedRecordIsTheRecord: a record read a member at a time with
// known texts (recordKnowing, as Observe reads it) is the record that
// record reads whole; a definition is the known raw message only when its
// bytes are the known ones; a record file the chain does not name is not
// streamed but judged by record, as before.
func TestStreamedRecordIsTheRecord(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	id := IdentityForName("streamed")
	observe(t, s, id, profileA, contractOf(ptrTo("Hi."), tool(t, "a", "A."), tool(t, "b", "B.")), Guard)
	observe(t, s, id, profileA, contractOf(nil, tool(t, "a", "A, changed.")), Guard)
	v, err := s.open(true)
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	want, err := v.record(id.ID)
	if err != nil || want == nil {
		t.Fatalf("record: %v, %v", want, err)
	}
	known := map[string]json.RawMessage{}
	var shared, wrong string
	for digest, raw := range want.Definitions {
		switch {
		case shared == "":
			shared = digest
			known[digest] = json.RawMessage(string(raw)) // the same bytes, elsewhere
		case wrong == "":
			wrong = digest
			known[digest] = json.RawMessage(`{"name":"other"}`)
		}
	}
	if v.streamRecord(id.ID, known) == nil {
		t.Fatal("a sound record file was not streamed")
	}
	got, err := v.recordKnowing(id.ID, known)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("streamed\n%#v\nrecord reads\n%#v", got, want)
	}
	if &got.Definitions[shared][0] != &known[shared][0] {
		t.Error("a definition with the known bytes was copied")
	}
	if string(got.Definitions[wrong]) == `{"name":"other"}` {
		t.Error("a known text with other bytes was taken for the definition")
	}

	// A record file that is not the one the chain names is record's to
	// judge: tampered, as before.
	path := filepath.Join(s.Dir(), id.ID+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if v.streamRecord(id.ID, known) != nil {
		t.Error("a record file the chain does not name was streamed")
	}
	if _, err := v.recordKnowing(id.ID, known); !errors.Is(err, ErrTampered) {
		t.Errorf("a changed record file: %v, want a tampered store", err)
	}
}
