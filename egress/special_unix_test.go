//go:build unix

package egress

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

func loadWithin(t *testing.T, load func() (*Credential, error)) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := load(); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("reading the credential blocked on a special file")
		return nil
	}
}

// TestFIFOInPlaceOfCredential: a FIFO where a credential file should be
// is refused at once, in both forms; mcpseal run would otherwise hang
// before it answers the client.
func TestFIFOInPlaceOfCredential(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "token")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "linked")
	os.Symlink(fifo, link)
	for _, p := range []string{fifo, link} {
		err := loadWithin(t, func() (*Credential, error) { return LoadCredential("Authorization", p, "", nil) })
		if !errors.Is(err, atomicfile.ErrNotRegular) {
			t.Errorf("LoadCredential(%s) = %v, want ErrNotRegular", filepath.Base(p), err)
		}
		err = loadWithin(t, func() (*Credential, error) { return LoadCredentialFile(p) })
		if !errors.Is(err, atomicfile.ErrNotRegular) {
			t.Errorf("LoadCredentialFile(%s) = %v, want ErrNotRegular", filepath.Base(p), err)
		}
	}
}

// TestCredentialLinks: a raw credential the host names may sit behind a
// link (mounted secrets do); wrap's credential file is mcpseal's state and
// may not.
func TestCredentialLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	raw := filepath.Join(dir, "token")
	os.WriteFile(raw, []byte("Bearer sk-secret\n"), 0o600)
	wrapped := filepath.Join(dir, "wrapped.json")
	os.WriteFile(wrapped, []byte(`{"version": 1, "headers": {"Authorization": "Bearer sk-secret"}}`), 0o600)
	rawLink, wrappedLink := filepath.Join(dir, "token-link"), filepath.Join(dir, "wrapped-link.json")
	os.Symlink(raw, rawLink)
	os.Symlink(wrapped, wrappedLink)
	if _, err := LoadCredential("Authorization", rawLink, "", nil); err != nil {
		t.Errorf("a raw credential behind a link: %v", err)
	}
	_, err := LoadCredentialFile(wrappedLink)
	if !errors.Is(err, atomicfile.ErrNotRegular) {
		t.Errorf("LoadCredentialFile through a link = %v, want ErrNotRegular", err)
	}
	if err != nil && strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("the error echoes the credential: %v", err)
	}
}
