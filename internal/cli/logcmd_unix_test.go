//go:build unix

package cli

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	mtlog "github.com/mcpseal/mcpseal/tlog"
)

// TestCheckpointCosignaturesReadBounded: `log checkpoint --cosignatures`
// reads at most a checkpoint note's size of the file a person names, and
// refuses a FIFO without blocking (known gap 17).
func TestCheckpointCosignaturesReadBounded(t *testing.T) {
	dir, _ := logFixture(t)
	w, err := mtlog.GenerateWitness(rand.Reader, "witness.example", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	wkey := filepath.Join(work, "witness.pub")
	if err := os.WriteFile(wkey, []byte(w.VerifierKey()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(work, "big")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), mtlog.MaxCheckpointNote+1), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := mcpseal(t, "log", "checkpoint", dir, "--cosignatures", big, "--witness", wkey)
	if code == 0 || !strings.Contains(errs, "larger than") {
		t.Errorf("an oversized cosignatures file: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	fifo := filepath.Join(work, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		_, _, code := mcpseal(t, "log", "checkpoint", dir, "--cosignatures", fifo, "--witness", wkey)
		done <- code
	}()
	select {
	case code := <-done:
		if code == 0 {
			t.Error("a FIFO as the cosignatures file was read")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("log checkpoint blocked on a FIFO")
	}
}
