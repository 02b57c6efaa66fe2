//go:build !unix

package tlog

// nonBlock: there are no FIFOs in the file system here.
const nonBlock = 0
