package pin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpseal/mcpseal/contract"
)

// decodeRecordTwoPass is decodeRecord as it was before a current record
// was decoded once: the version read by json.Unmarshal, then the record
// decoded strictly in the form of that version.
func decodeRecordTwoPass(id string, data []byte) (*record, error) {
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, errors.New("record file does not parse")
	}
	var r *record
	switch head.Version {
	case recordVersion:
		r = new(record)
		if err := decodeStrict(data, r); err != nil {
			return nil, err
		}
	case 1:
		var v1 recordV1
		if err := decodeStrict(data, &v1); err != nil {
			return nil, err
		}
		if v1.Version != 1 {
			return nil, errors.New("record file does not parse")
		}
		r = v1.upgrade()
	default:
		return nil, errors.New("record file is malformed: unknown format version")
	}
	if err := r.check(id); err != nil {
		return nil, fmt.Errorf("record file is malformed: %v", err)
	}
	return r, nil
}

// FuzzDecodeRecordOnce: decodeRecord accepts, refuses (with the same
// error) and reads exactly what the two-pass decoding did.
func FuzzDecodeRecordOnce(f *testing.F) {
	s, err := Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	id := IdentityForName("memory")
	observe(f, s, id, profileA, contractOf(ptrTo("Hi."), tool(f, "a", "A <b> & c."), tool(f, "b", "B.")), Guard)
	data, err := os.ReadFile(filepath.Join(s.Dir(), id.ID+".json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	for _, tail := range []string{" \n", "}", "]", " x", "{}", "\x00"} {
		f.Add(append(bytes.Clone(data), tail...))
	}
	f.Add(bytes.Replace(data, []byte(`{"version":2,`), []byte(`{"version":2,"version":1,`), 1))
	f.Add(bytes.Replace(data, []byte(`{"version":2,`), []byte(`{"version":1,"Version":2,`), 1))
	f.Add(bytes.Replace(data, []byte(`{"version":2,`), []byte(`{"version":2.0,`), 1))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1}`))
	v1, err := os.ReadFile(filepath.Join("../testdata/pin/records/v1", v1ID+".json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(bytes.ReplaceAll(v1, []byte(v1ID), []byte(id.ID)))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeRecord(id.ID, data)
		want, werr := decodeRecordTwoPass(id.ID, data)
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("error %v, two-pass %v", err, werr)
		}
		if err != nil {
			return
		}
		got, err1 := encodeJSON(r)
		exp, err2 := encodeJSON(want)
		if err1 != nil || err2 != nil || !bytes.Equal(got, exp) {
			t.Fatalf("decoded\n%s\ntwo-pass decoded\n%s", got, exp)
		}
	})
}

// BenchmarkDecodeRecord: a record of 40 tools, decoded once against the
// two-pass reading (docs/performance.md, issue 12).
func BenchmarkDecodeRecord(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	id := IdentityForName("memory")
	var tools []contract.Definition
	for i := range 40 {
		tools = append(tools, tool(b, fmt.Sprintf("tool_%05d", i), "Searches the project's documents and returns matching passages with their paths."))
	}
	observe(b, s, id, profileA, contractOf(ptrTo("Use these tools."), tools...), Guard)
	data, err := os.ReadFile(filepath.Join(s.Dir(), id.ID+".json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		decode func(string, []byte) (*record, error)
	}{{"once", decodeRecord}, {"two-pass", decodeRecordTwoPass}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.decode(id.ID, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
