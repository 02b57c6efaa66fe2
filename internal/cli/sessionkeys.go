package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/sessionid"
)

// readSessionKeys loads the replicas' shared session keys
// (--session-key): a regular file owned by this user or root that nobody
// but its owner may read or write, at most sessionid.MaxKeyFile bytes. Errors name the flag, never the
// file's contents.
func readSessionKeys(path string) (*sessionid.Keys, error) {
	f, err := atomicfile.OpenFollow(path)
	if err != nil {
		return nil, withHint(errors.New("--session-key: cannot open the key file, or it is not a regular file"), "name a regular file of mode 0600")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("--session-key: cannot read the key file")
	}
	if !ownedByUs(st) {
		return nil, withHint(errors.New("--session-key: the key file is owned by another user"), "the key file must be owned by the user the gateway runs as, or by root")
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, withHint(errors.New("--session-key: the key file may be read or written by others"), "chmod 600 the key file")
	}
	// The limit of the format, plus one byte to tell a larger file.
	b, err := io.ReadAll(io.LimitReader(f, sessionid.MaxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("--session-key: cannot read the key file")
	}
	k, err := sessionid.ParseKeys(b)
	if err != nil {
		return nil, withHint(fmt.Errorf("--session-key: %w", err), "see docs/fleet.md, \"Sessions across replicas\"")
	}
	return k, nil
}
