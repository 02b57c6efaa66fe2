//go:build unix

package wire

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByUser reports whether the file belongs to the user running
// mcpseal: wrap edits no one else's file.
func ownedByUser(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// trustedByUser reports whether an entry (a file, a link or a folder on
// the way to one) can be changed only by the user running mcpseal or by
// root: owned by one of them, and for a folder not writable by group or
// others unless it is sticky (there only an entry's owner may replace it,
// which the entry's own check covers).
func trustedByUser(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Getuid() && st.Uid != 0 {
		return false
	}
	if fi.IsDir() && fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		return false
	}
	return true
}
