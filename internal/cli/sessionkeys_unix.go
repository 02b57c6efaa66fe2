//go:build unix

package cli

import (
	"os"
	"syscall"
)

// ownedByUs reports whether fi's owner is this user or root: a file of
// mode 0600 owned by another account is one that account may rewrite
// (as launch's openOwnedFile refuses).
func ownedByUs(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	return st.Uid == uint32(os.Geteuid()) || st.Uid == 0
}
