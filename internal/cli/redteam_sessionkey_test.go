package cli

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpseal/mcpseal/sessionid"
)

// TestAttackSessionKeyFileOwnedByAnotherUser: the key file's mode is
// checked (0600) but not its owner. A file of mode 0600 owned by another,
// unprivileged account (here uid 65534) is one that account may rewrite
// at will: it puts its own key on top and mints sealed ids for any url
// route's session whose upstream session id it learns, or swaps the key
// to end every sealed session of the fleet. The gateway loads it. The
// launch profile (openOwnedFile) refuses such a file: owner is this user
// or root.
func TestAttackSessionKeyFileOwnedByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand the file to another uid")
	}
	line, err := sessionid.NewKey("k1", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "session.keys")
	if err := os.WriteFile(p, []byte(sessionid.FileHeader+line), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := readSessionKeys(p); err == nil {
		t.Fatal("--session-key loaded a key file owned by another (unprivileged) user, who may rewrite it")
	}
}
