package launch

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openNoSymlinks opens path for reading without following a symbolic
// link in any of its components (openat2 RESOLVE_NO_SYMLINKS; before
// Linux 5.6, only the last component is checked, with O_NOFOLLOW).
func openNoSymlinks(path string, dir bool) (*os.File, error) {
	flags := uint64(unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK)
	if dir {
		flags |= unix.O_DIRECTORY
	}
	how := unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &how)
	if errors.Is(err, unix.ENOSYS) {
		fd, err = unix.Open(path, int(flags)|unix.O_NOFOLLOW, 0)
	}
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			err = errors.New("a component of the path is a symbolic link")
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	if !dir {
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			f.Close()
			return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("not a regular file")}
		}
	}
	return f, nil
}
