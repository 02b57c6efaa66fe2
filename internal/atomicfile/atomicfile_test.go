package atomicfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

func TestWriteReplacesAndLeavesNoTemporaryFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "pins.json")
	for _, data := range []string{"first", "second, longer"} {
		if err := atomicfile.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := atomicfile.ReadFile(path, 1024)
		if err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %v; the temporary file was left behind", entries)
	}
}

func TestReadRefusesOversizedAndSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte(strings.Repeat("x", 100)), 0o600)
	if _, err := atomicfile.ReadFile(big, 99); err == nil {
		t.Error("oversized file read")
	}
	if _, err := atomicfile.ReadFile(dir, 99); err == nil {
		t.Error("a folder read as a file")
	}
	if _, err := atomicfile.ReadFile(filepath.Join(dir, "missing"), 99); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadFileTooLargeIsTyped(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "events.jsonl")
	os.WriteFile(p, []byte(strings.Repeat("x", 10)), 0o600)
	_, err := atomicfile.ReadFile(p, 9)
	if !errors.Is(err, atomicfile.ErrTooLarge) || err.Error() != "events.jsonl is larger than its limit of 9 bytes" {
		t.Errorf("err = %v", err)
	}
}
