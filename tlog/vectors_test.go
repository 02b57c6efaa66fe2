package tlog

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

type vectors struct {
	Entries struct {
		Valid   []string `json:"valid"`
		Invalid []struct {
			Why   string `json:"why"`
			Entry string `json:"entry"`
		} `json:"invalid"`
	} `json:"entries"`
	Checkpoints struct {
		Valid []struct {
			Body   string `json:"body"`
			Origin string `json:"origin"`
			Size   int64  `json:"size"`
			Root   string `json:"root"`
		} `json:"valid"`
		Invalid []struct {
			Why  string `json:"why"`
			Body string `json:"body"`
		} `json:"invalid"`
	} `json:"checkpoints"`
	TilePaths struct {
		Valid []struct {
			Path  string `json:"path"`
			Level int    `json:"level"`
			Index int64  `json:"index"`
			Width int    `json:"width"`
		} `json:"valid"`
		Invalid []string `json:"invalid"`
	} `json:"tilePaths"`
}

func loadVectors(t testing.TB) *vectors {
	b, err := os.ReadFile("../testdata/tlog/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Entries.Valid) == 0 || len(v.Entries.Invalid) == 0 || len(v.Checkpoints.Valid) == 0 ||
		len(v.Checkpoints.Invalid) == 0 || len(v.TilePaths.Valid) == 0 || len(v.TilePaths.Invalid) == 0 {
		t.Fatal("a vector section is empty")
	}
	return &v
}

func TestEntryVectors(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	for _, s := range v.Entries.Valid {
		e, err := ParseEntry([]byte(s))
		if err != nil {
			t.Fatalf("valid entry refused: %v", err)
		}
		again, err := e.Marshal()
		if err != nil || !bytes.Equal(again, []byte(s)) {
			t.Fatalf("entry does not re-encode to its bytes: %v\n%s", err, again)
		}
	}
	for _, c := range v.Entries.Invalid {
		if _, err := ParseEntry([]byte(c.Entry)); err == nil {
			t.Errorf("%s: accepted", c.Why)
		}
	}
}

func TestCheckpointVectors(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	for _, c := range v.Checkpoints.Valid {
		cp, err := ParseCheckpoint([]byte(c.Body))
		if err != nil {
			t.Fatalf("%q: %v", c.Body, err)
		}
		if cp.Origin != c.Origin || cp.Size != c.Size || hex.EncodeToString(cp.Root[:]) != c.Root {
			t.Fatalf("%q parsed as %v", c.Body, cp)
		}
		if string(cp.Format()) != c.Body {
			t.Fatalf("%q re-encodes as %q", c.Body, cp.Format())
		}
	}
	for _, c := range v.Checkpoints.Invalid {
		if _, err := ParseCheckpoint([]byte(c.Body)); err == nil {
			t.Errorf("%s: accepted", c.Why)
		}
	}
}

func TestTilePathVectors(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	for _, c := range v.TilePaths.Valid {
		tl, err := ParseTilePath(c.Path)
		if err != nil {
			t.Fatalf("%s: %v", c.Path, err)
		}
		if tl.L != c.Level || tl.N != c.Index || tl.W != c.Width || TilePath(tl) != c.Path {
			t.Fatalf("%s parsed as %+v", c.Path, tl)
		}
	}
	for _, p := range v.TilePaths.Invalid {
		if tl, err := ParseTilePath(p); err == nil {
			t.Errorf("%s: accepted as %+v", p, tl)
		}
	}
}

func TestBundleParsing(t *testing.T) {
	t.Parallel()
	b := appendBundleEntry(appendBundleEntry(nil, []byte("a")), []byte("bc"))
	if es, err := ParseBundle(b, 2); err != nil || len(es) != 2 || string(es[1]) != "bc" {
		t.Fatalf("%q %v", es, err)
	}
	for name, c := range map[string]struct {
		data []byte
		w    int
	}{
		"fewer entries than the width": {b, 3},
		"more entries than the width":  {b, 1},
		"truncated entry":              {b[:len(b)-1], 2},
		"trailing byte":                {append(b, 0), 2},
		"empty entry":                  {append([]byte{0, 0}, b...), 3},
		"width zero":                   {nil, 0},
		"width beyond a bundle":        {b, 257},
	} {
		if _, err := ParseBundle(c.data, c.w); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
