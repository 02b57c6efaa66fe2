//go:build !unix

package atomicfile

// Neither flag exists here (Windows has no FIFOs in its file system, and
// its links are reparse points): open compares the name with the opened
// file instead.
const (
	noFollow = 0
	nonBlock = 0
)
