package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNotRegular: a name that should be a regular file is something else
// (see the package doc's Special files section). Errors satisfying it are
// *NotRegularError values.
var ErrNotRegular = errors.New("not a regular file")

// A NotRegularError names a file that is not a regular file, and what it
// is instead ("a named pipe (FIFO)", "a symbolic link", ...).
type NotRegularError struct {
	Name string // the base name
	Kind string
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Name, e.Kind)
}

// Is makes errors.Is(err, ErrNotRegular) hold.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

func notRegular(path string, m fs.FileMode) error {
	return &NotRegularError{Name: filepath.Base(path), Kind: Kind(m)}
}

// Kind names what a file is, for messages about a file that should be a
// regular file or a folder: "a named pipe (FIFO)", "a symbolic link" ...
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

// Open opens the regular file at path for reading, without following a
// final symbolic link and without blocking on a FIFO or a device.
func Open(path string) (*os.File, error) { return open(path, os.O_RDONLY, 0, false) }

// OpenFollow is Open for a file a person names: a final symbolic link is
// followed, and must lead to a regular file.
func OpenFollow(path string) (*os.File, error) { return open(path, os.O_RDONLY, 0, true) }

// OpenFile is os.OpenFile for a file mcpseal owns: appends to a log, a
// lock file, a file rewritten in place. The name must be a regular file
// (or, with O_CREATE, absent), never a symbolic link; the open does not
// block. O_TRUNC is applied only after those checks, so it never reaches
// what the name was not supposed to be.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return open(path, flag, perm, false)
}

func open(path string, flag int, perm os.FileMode, follow bool) (*os.File, error) {
	look := os.Lstat
	if follow {
		look = os.Stat
	}
	// Look first: what is visibly not a regular file is refused by its
	// name, without opening it (opening a device can have effects).
	switch fi, err := look(path); {
	case err == nil && !fi.Mode().IsRegular():
		return nil, notRegular(path, fi.Mode())
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0:
	default:
		return nil, err
	}
	oflag := flag&^os.O_TRUNC | nonBlock
	if !follow {
		oflag |= noFollow
	}
	f, err := os.OpenFile(path, oflag, perm)
	if err != nil {
		// The name changed since the look: O_NOFOLLOW refuses a link
		// (ELOOP), O_NONBLOCK a FIFO without a reader (ENXIO).
		if fi, lerr := look(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, notRegular(path, fi.Mode())
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, fi.Mode())
	}
	if !follow && noFollow == 0 {
		// No O_NOFOLLOW on this system: the name must still be the file
		// that was opened, not a link planted since the look.
		if lfi, err := os.Lstat(path); err != nil || !os.SameFile(lfi, fi) {
			f.Close()
			if err == nil {
				return nil, &NotRegularError{Name: filepath.Base(path), Kind: "a name that changed while it was opened"}
			}
			return nil, err
		}
	}
	if flag&os.O_TRUNC != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}
