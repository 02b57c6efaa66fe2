package tlog

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"golang.org/x/mod/sumdb/note"
)

// A SeenStore keeps, for each pinned log key, the last checkpoint a
// verifier accepted: the files under $MCPSEAL_HOME (Seen) or a fleet's
// database (pgstate), so that every replica proves the log only grew since
// any of them last looked.
type SeenStore interface {
	// Load returns the last accepted checkpoint for key, nil when there
	// is none; a stored checkpoint that no longer verifies is an error.
	Load(key note.Verifier) (*SignedCheckpoint, error)
	// Store records c as the last accepted checkpoint for key.
	Store(key note.Verifier, c *SignedCheckpoint) error
}

// A Seen store keeps, for each pinned log key, the last checkpoint this
// verifier accepted, so that the next verification can prove the log only
// grew. It lives under $MCPSEAL_HOME/tlog/seen (0700), one file per key:
// <origin with "/" as "_">+<key hash in hex>.
type Seen struct {
	Dir string
}

// SeenDir returns the Seen store under home.
func SeenDir(home string) *Seen { return &Seen{Dir: filepath.Join(home, "tlog", "seen")} }

func (s *Seen) path(key note.Verifier) string {
	return filepath.Join(s.Dir, fmt.Sprintf("%s+%08x", strings.ReplaceAll(key.Name(), "/", "_"), key.KeyHash()))
}

// Load returns the last accepted checkpoint for key, nil when there is
// none. A stored checkpoint that no longer verifies is an error: the
// verifier's memory was tampered with, and nothing falls back to trusting
// whatever comes next.
func (s *Seen) Load(key note.Verifier) (*SignedCheckpoint, error) {
	// The seen checkpoints are mcpseal's state: not a link, not a FIFO.
	b, err := atomicfile.ReadFile(s.path(key), MaxCheckpointNote)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c, err := OpenCheckpoint(b, key, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("the last checkpoint this verifier accepted (%s) does not verify: %w", s.path(key), err)
	}
	return c, nil
}

// Store records c as the last accepted checkpoint for key.
func (s *Seen) Store(key note.Verifier, c *SignedCheckpoint) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	return WriteFileAtomic(s.path(key), c.Note, 0o600)
}

// WriteFileAtomic writes data to path through a temporary file in the same
// folder, synced, then renamed over path.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	if err := errors.Join(werr, serr, f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	_ = atomicfile.SyncDir(filepath.Dir(path))
	return nil
}
