package pin

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseChain checks that the event log parser never panics and only
// accepts logs that it would write itself: every accepted line re-encodes
// to its own bytes and chains to the line before it.
func FuzzParseChain(f *testing.F) {
	files, _ := filepath.Glob("../testdata/pin/events/*.jsonl")
	if len(files) == 0 {
		f.Fatal("no seeds loaded")
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseChain(data)
		if err != nil {
			return
		}
		prev := zeroHash
		lines := bytes.SplitAfter(data[:c.size], []byte("\n"))
		var n int64
		for _, line := range lines {
			if len(line) == 0 {
				continue
			}
			line = bytes.TrimSuffix(line, []byte("\n"))
			n++
			if !bytes.Contains(line, []byte(`"prev":"`+prev+`"`)) {
				t.Fatalf("line %d accepted without chaining", n)
			}
			prev = lineHash(line)
		}
		if n != c.n || prev != c.last {
			t.Fatalf("accepted %d events, counted %d", c.n, n)
		}
	})
}

// FuzzDecodeRecord checks that the record parser never panics and that an
// accepted record encodes to a record that is accepted again.
func FuzzDecodeRecord(f *testing.F) {
	s, err := Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	id := IdentityForName("memory")
	observe(f, s, id, profileA, contractOf(ptrTo("Hi."), tool(f, "a", "A <b> & c."), tool(f, "b", "B.")), Guard)
	observe(f, s, id, profileA, contractOf(nil, tool(f, "a", "A, changed.")), Guard)
	data, err := os.ReadFile(filepath.Join(s.Dir(), id.ID+".json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	// A first contract awaiting approval: no profile, a pending change.
	awaiting, err := Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	observe(f, awaiting, id, profileA, contractOf(ptrTo("Hi."), tool(f, "a", "A.")), Strict)
	data, err = os.ReadFile(filepath.Join(awaiting.Dir(), id.ID+".json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"version":1}`))
	// A record an earlier release wrote (version 1), for this server.
	v1, err := os.ReadFile(filepath.Join("../testdata/pin/records/v1", v1ID+".json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(bytes.ReplaceAll(v1, []byte(v1ID), []byte(id.ID)))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeRecord(id.ID, data)
		if err != nil {
			return
		}
		again, err := encodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		if want, err := encodeJSON(r); err != nil || !bytes.Equal(again, want) {
			t.Fatalf("encodeRecord wrote\n%s\nencoding/json writes\n%s", again, want)
		}
		if _, err := decodeRecord(id.ID, again); err != nil {
			t.Fatalf("re-encoded record rejected: %v", err)
		}
	})
}
