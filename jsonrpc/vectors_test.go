package jsonrpc

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The vectors live in the repository's testdata so that other
// implementations can use them too.
var vectorDir = filepath.Join("..", "testdata", "jsonrpc")

type peekVector struct {
	Name     string  `json:"name"`
	Frame    *string `json:"frame"`
	FrameHex string  `json:"frame_hex"`
	Kind     string  `json:"kind"`
	Fails    string  `json:"fails"`
	ID       *string `json:"id"`
	IDKey    string  `json:"id_key"`
	Method   string  `json:"method"`
	Params   *string `json:"params"`
	Result   *string `json:"result"`
	Error    *string `json:"error"`
}

func (v *peekVector) frame(t testing.TB) []byte {
	if v.Frame != nil {
		return []byte(*v.Frame)
	}
	b, err := hex.DecodeString(v.FrameHex)
	if err != nil {
		t.Fatalf("%s: frame_hex: %v", v.Name, err)
	}
	return b
}

type valueVector struct {
	Name     string      `json:"name"`
	Input    string      `json:"input"`
	Fails    string      `json:"fails"`
	Members  [][2]string `json:"members"`
	Elements []string    `json:"elements"`
	Value    string      `json:"value"`
}

type valueVectors struct {
	Members  []valueVector `json:"members"`
	Elements []valueVector `json:"elements"`
	Strings  []valueVector `json:"strings"`
}

type readerVector struct {
	Name     string    `json:"name"`
	Input    string    `json:"input"`
	MaxFrame int       `json:"max_frame"`
	Frames   []*string `json:"frames"`
}

func loadJSON(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func loadPeekVectors(t testing.TB) []peekVector {
	var f struct{ Vectors []peekVector }
	loadJSON(t, "peek.json", &f)
	if len(f.Vectors) == 0 {
		t.Fatal("peek.json: no vectors")
	}
	return f.Vectors
}

func loadValueVectors(t testing.TB) valueVectors {
	var f valueVectors
	loadJSON(t, "values.json", &f)
	if len(f.Members) == 0 || len(f.Elements) == 0 || len(f.Strings) == 0 {
		t.Fatal("values.json: no vectors")
	}
	return f
}

func loadReaderVectors(t testing.TB) []readerVector {
	var f struct{ Vectors []readerVector }
	loadJSON(t, "reader.json", &f)
	if len(f.Vectors) == 0 {
		t.Fatal("reader.json: no vectors")
	}
	return f.Vectors
}
