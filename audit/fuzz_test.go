package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseLine: the line parser never panics; a line it accepts is
// exactly what encode writes for the event it returns.
func FuzzParseLine(f *testing.F) {
	entries, err := os.ReadDir(vectorDir)
	if err != nil {
		f.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(vectorDir, e.Name()))
		for _, line := range bytes.Split(data, []byte("\n")) {
			f.Add(line)
			n++
		}
	}
	if n == 0 {
		f.Fatal("no seeds loaded")
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := parseLine(line)
		if err != nil {
			return
		}
		enc, err := encode(&e)
		if err != nil || !bytes.Equal(enc, line) {
			t.Fatalf("accepted %q, which encodes as %q", line, enc)
		}
	})
}
