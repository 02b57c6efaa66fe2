package pin_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/pin/pintest"
)

// fileBacking is the file store's state for the contract suite: one home
// folder, opened as often as a test wants, edited by hand the way someone
// with write access to it would.
type fileBacking struct{ home string }

func (b fileBacking) Open(t *testing.T) *pin.Store {
	s, err := pin.Open(b.home)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (b fileBacking) path(name string) string { return filepath.Join(b.home, "pins", name) }

func (b fileBacking) EditRecord(t *testing.T, id string) {
	p := b.path(id + ".json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"label"`), []byte(`"label" `), 1)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (b fileBacking) DeleteEvent(t *testing.T, seq int64) {
	p := b.path("events.jsonl")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines = append(lines[:seq-1], lines[seq:]...)
	if err := os.WriteFile(p, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (b fileBacking) AppendEvent(t *testing.T, line []byte) {
	f, err := os.OpenFile(b.path("events.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
}

func (b fileBacking) ReadRecord(t *testing.T, id string) []byte {
	data, err := os.ReadFile(b.path(id + ".json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func (b fileBacking) WriteRecord(t *testing.T, id string, data []byte) {
	if err := os.WriteFile(b.path(id+".json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (b fileBacking) PlantRecord(t *testing.T, id string, data []byte) {
	if err := os.WriteFile(b.path(id+".json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestStoreContract runs the pin store contract suite against the file
// store; pgstate runs the same suite against PostgreSQL.
func TestStoreContract(t *testing.T) {
	t.Parallel()
	pintest.Run(t, pintest.Suite{New: func(t *testing.T) pintest.Backing { return fileBacking{home: t.TempDir()} }})
}
