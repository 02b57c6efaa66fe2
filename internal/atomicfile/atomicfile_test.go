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

// WriteFile and WriteFileUnsynced (the same, without the fsyncs) replace
// the file: the new bytes, the mode asked for, no temporary file left.
func TestWriteReplacesAndLeavesNoTemporaryFile(t *testing.T) {
	t.Parallel()
	for name, write := range map[string]func(string, []byte, os.FileMode) error{
		"WriteFile":         atomicfile.WriteFile,
		"WriteFileUnsynced": atomicfile.WriteFileUnsynced,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "pins.json")
			for _, data := range []string{"first", "second, longer", "third"} {
				if err := write(path, []byte(data), 0o600); err != nil {
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
		})
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

// TestReadFileAllocatesItsSize: ReadFile reads into a buffer the size of
// the file (and one byte to see its end), not one grown by doubling; the
// bytes and the limit are as before.
func TestReadFileAllocatesItsSize(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "record.json")
	want := strings.Repeat("0123456789", 100_000)
	if err := atomicfile.WriteFile(path, []byte(want), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := atomicfile.ReadFile(path, int64(len(want)))
	if err != nil || string(got) != want {
		t.Fatalf("ReadFile = %d bytes, %v", len(got), err)
	}
	if cap(got) > len(want)+1 {
		t.Errorf("ReadFile's buffer is %d bytes for a %d-byte file", cap(got), len(want))
	}
	if _, err := atomicfile.ReadFile(path, int64(len(want))-1); !errors.Is(err, atomicfile.ErrTooLarge) {
		t.Errorf("a file one byte over its limit: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := atomicfile.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := atomicfile.ReadFile(empty, 10); err != nil || len(got) != 0 {
		t.Errorf("an empty file: %q, %v", got, err)
	}
}
