package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/lock/valid-sample.lock from sampleLock")

// TestLockVectors loads every vector of testdata/lock/vectors.json: lock
// files that must load, and hand-edited ones that must be refused.
func TestLockVectors(t *testing.T) {
	t.Parallel()
	if *update {
		if err := os.WriteFile("../testdata/lock/valid-sample.lock", marshal(t, sampleLock(t)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile("../testdata/lock/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		File  string `json:"file"`
		Want  string `json:"want"`
		Fault string `json:"fault"`
	}
	if err := json.Unmarshal(b, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range vectors {
		data, err := os.ReadFile(filepath.Join("../testdata/lock", v.File))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Parse(data)
		switch v.Want {
		case "ok":
			if err != nil {
				t.Errorf("%s: %v", v.File, err)
			}
		case "tampered":
			if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), v.Fault) {
				t.Errorf("%s: got %v, want ErrTampered mentioning %q", v.File, err, v.Fault)
			}
		case "unknown-version":
			if !errors.Is(err, ErrUnknownVersion) {
				t.Errorf("%s: got %v, want ErrUnknownVersion", v.File, err)
			}
		default:
			t.Fatalf("%s: unknown want %q", v.File, v.Want)
		}
	}
}

// TestDocsExampleLoads: the full example in docs/lock-format.md is a lock
// this package accepts.
func TestDocsExampleLoads(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/lock-format.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- example lock -->\n```json\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/lock-format.md has no example lock block")
	}
	l, err := Parse(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Servers) == 0 {
		t.Fatal("the example has no servers")
	}
	sample, _ := os.ReadFile("../testdata/lock/valid-sample.lock")
	if !bytes.Equal(m[1], sample) {
		t.Error("the docs example and testdata/lock/valid-sample.lock differ")
	}
}

// FuzzParse: the lock reader never panics, and whatever it accepts is in
// the one form mcpseal writes.
func FuzzParse(f *testing.F) {
	// Small seeds: the fuzzer minimises every input that finds new
	// coverage, and minimising the 4 KiB sample takes longer than a short
	// fuzzing run. The sample and the hand-edited vectors are checked by
	// TestLockVectors.
	l := New()
	e, err := NewEntry(Observation{Command: NewCommand("x", []string{"-y"}, "", map[string]string{"K": "v"}),
		Contract: contractOf(ptr("hi"), tool(f, "t", "d"))}, nil)
	if err != nil {
		f.Fatal(err)
	}
	a := testApproval
	a.Digest = e.Tools[0].Digest
	if err := e.Approve("tools", "t", a); err != nil {
		f.Fatal(err)
	}
	l.Set("s", e)
	f.Add(marshal(f, l))
	f.Add(marshal(f, New()))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			return
		}
		again, err := l.Marshal()
		if err != nil || !bytes.Equal(again, normalizeNewlines(data)) {
			t.Fatalf("accepted a lock that does not re-encode to itself")
		}
	})
}

// FuzzParseManifest: the manifest reader never panics.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"format":"mcpseal-lock-manifest/1","lock_digest":"sha256:` + strings.Repeat("0", 64) + `","sequence":1,"signed_at":"2026-11-02T10:00:00Z","key":"","signature":""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			return
		}
		if m.Verify(nil, nil) == nil {
			t.Fatal("a manifest verified against no trusted key")
		}
	})
}
