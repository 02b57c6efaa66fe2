//go:build !unix

package tlog

import "errors"

// Lock refuses: without flock two writers could interleave, and the log
// must fail closed rather than risk a torn tree.
func (d *Dir) Lock() (func(), error) {
	return nil, errors.New("tlog: writing a log needs a Unix system")
}
