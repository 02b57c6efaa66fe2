//go:build unix

package audit

import (
	"errors"
	"github.com/mcpseal/mcpseal/internal/atomicfile/specialtest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// These tests plant special files where the audit log keeps its files.
// Every call runs under a deadline, so a regression that blocks on a FIFO
// fails instead of hanging the suite.

func faultsSay(rep *Report, want string) bool {
	for _, f := range rep.Faults {
		if strings.Contains(f.Reason, want) {
			return true
		}
	}
	return false
}

// TestFIFOInPlaceOfAuditLog: a FIFO at current.jsonl, at a rotated file or
// at the head fails the next append (the caller fails closed) without
// blocking, and Verify and Tail say so without blocking either.
func TestFIFOInPlaceOfAuditLog(t *testing.T) {
	t.Parallel()
	for _, name := range []string{currentName, "rotated", headName} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l, home := openTest(t, Options{MaxFileBytes: 4096, MaxFiles: 100})
			appendN(t, l, 30)
			path := filepath.Join(Dir(home), name)
			if name == "rotated" {
				fs, err := rotatedFiles(Dir(home))
				if err != nil || len(fs) == 0 {
					t.Fatalf("rotated files: %v, %v", fs, err)
				}
				// The newest rotated file is read when current.jsonl
				// is empty; make it so by planting at the newest.
				path = filepath.Join(Dir(home), fs[len(fs)-1].name)
				os.Remove(filepath.Join(Dir(home), currentName))
			}
			specialtest.Mkfifo(t, path)
			specialtest.Within(t, func() {
				if err := l.Append(callEvent(99)); err == nil {
					t.Error("an append through a FIFO succeeded")
				}
			})
			specialtest.Within(t, func() {
				rep := mustVerify(t, home)
				if !faultsSay(rep, "named pipe") {
					t.Errorf("Verify: %s", faultText(rep))
				}
			})
			specialtest.Within(t, func() {
				if name != headName {
					if _, _, err := Tail(home, 5); err == nil {
						t.Error("Tail read a FIFO")
					}
				}
			})
		})
	}
}

func TestSymlinkedAuditLogIsNotWrittenThrough(t *testing.T) {
	t.Parallel()
	l, home := openTest(t, Options{})
	appendN(t, l, 3)
	victim := filepath.Join(t.TempDir(), "victim")
	data, err := os.ReadFile(current(home))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(victim, data, 0o600)
	os.Remove(current(home))
	if err := os.Symlink(victim, current(home)); err != nil {
		t.Fatal(err)
	}
	specialtest.Within(t, func() {
		if err := l.Append(callEvent(7)); err == nil {
			t.Error("an append through a link succeeded")
		}
	})
	if b, _ := os.ReadFile(victim); string(b) != string(data) {
		t.Error("the append went through the link")
	}
	if rep := mustVerify(t, home); !faultsSay(rep, "symbolic link") {
		t.Errorf("Verify: %s", faultText(rep))
	}
}

func TestFIFOInPlaceOfAuditLockFile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.MkdirAll(Dir(home), 0o700); err != nil {
		t.Fatal(err)
	}
	specialtest.Mkfifo(t, filepath.Join(Dir(home), lockName))
	specialtest.Within(t, func() {
		if _, err := Open(home, Options{}); !errors.Is(err, atomicfile.ErrNotRegular) {
			t.Errorf("Open with a FIFO lock = %v", err)
		}
		if rep := mustVerify(t, home); !faultsSay(rep, "named pipe") {
			t.Errorf("Verify: %s", faultText(rep))
		}
	})
}

func TestSymlinkedAuditFolderRefused(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.Symlink(t.TempDir(), Dir(home)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(home, Options{}); err == nil {
		t.Error("opened an audit log through a linked folder")
	}
	if rep := mustVerify(t, home); rep.OK() {
		t.Error("Verify passed a linked audit folder")
	}
}
