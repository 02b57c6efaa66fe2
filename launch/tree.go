//go:build unix

package launch

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// TreeStats describes a hashed tree.
type TreeStats struct {
	Files, Symlinks int
	Bytes           int64
}

const symlinkSuffix = "\x00symlink"

// TreeDigest returns the "h1:" digest of the folder dir: Go's dirhash
// Hash1 (the SHA-256 of the lines "<hex sha256 of the file>  <name>\n",
// sorted by name) over every regular file below dir by its
// slash-separated path relative to dir, and every symbolic link by that
// path followed by "\x00symlink" (a name no file can have), its content
// being the link's target text. Without links it equals
// dirhash.HashDir(dir, "", dirhash.Hash1).
//
// Links are never followed: every folder and file is opened relative to
// its parent's descriptor with O_NOFOLLOW, so nothing swapped in during
// the walk can lead it outside dir. Folders count only through their
// files; any other kind of file (device, socket, FIFO) is refused.
func TreeDigest(dir string) (string, TreeStats, error) {
	w := &treeWalk{jobs: make(chan hashJob, 64)}
	root, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", w.st, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), 4))
	var wg sync.WaitGroup
	wg.Add(workers)
	for range workers {
		go func() { defer wg.Done(); w.hashFiles() }()
	}
	walkErr := w.walk(root, "", 0)
	close(w.jobs)
	wg.Wait()
	if walkErr != nil {
		return "", w.st, walkErr
	}
	if w.err != nil {
		return "", w.st, w.err
	}
	slices.SortFunc(w.lines, func(a, b treeLine) int { return strings.Compare(a.name, b.name) })
	h := sha256.New()
	for _, l := range w.lines {
		fmt.Fprintf(h, "%x  %s\n", l.sum, l.name)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil)), w.st, nil
}

type treeLine struct {
	name string
	sum  [sha256.Size]byte
}

type hashJob struct {
	name string
	f    *os.File
	size int64
}

type treeWalk struct {
	jobs chan hashJob
	st   TreeStats

	mu    sync.Mutex
	lines []treeLine
	err   error
}

func (w *treeWalk) add(l treeLine) {
	w.mu.Lock()
	w.lines = append(w.lines, l)
	w.mu.Unlock()
}

func (w *treeWalk) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// hashFiles hashes the files the walk opened, checking that each is as
// long as it was when opened (a file that changes while it is hashed is
// refused).
func (w *treeWalk) hashFiles() {
	for j := range w.jobs {
		h := sha256.New()
		n, err := io.Copy(h, j.f)
		j.f.Close()
		if err == nil && n != j.size {
			err = errors.New("a file of the tree changed while it was hashed")
		}
		if err != nil {
			w.fail(fmt.Errorf("hashing the tree: %s: %w", j.name, err))
			continue
		}
		var l treeLine
		l.name = j.name
		copy(l.sum[:], h.Sum(nil))
		w.add(l)
	}
}

// walk reads the folder open as dirfd (and closes it).
func (w *treeWalk) walk(dirfd int, prefix string, depth int) error {
	d := os.NewFile(uintptr(dirfd), prefix)
	defer d.Close()
	if depth > maxTreeDepth {
		return fmt.Errorf("the tree nests folders deeper than %d", maxTreeDepth)
	}
	for {
		names, err := d.Readdirnames(1024)
		for _, n := range names {
			if err := w.entry(dirfd, prefix, n, depth); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || err == nil && len(names) == 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (w *treeWalk) entry(dirfd int, prefix, n string, depth int) error {
	name := prefix + n
	if strings.ContainsAny(name, "\n\x00") {
		return errors.New("the tree holds a file name with a newline")
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		fd, err := unix.Openat(dirfd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return w.walk(fd, name+"/", depth+1)
	case unix.S_IFLNK:
		buf := make([]byte, 4096)
		k, err := unix.Readlinkat(dirfd, n, buf)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		w.st.Symlinks++
		l := treeLine{name: name + symlinkSuffix, sum: sha256.Sum256(buf[:k])}
		w.add(l)
	case unix.S_IFREG:
		fd, err := unix.Openat(dirfd, n, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		f := os.NewFile(uintptr(fd), name)
		var fst unix.Stat_t
		if err := unix.Fstat(fd, &fst); err != nil || fst.Ino != st.Ino || fst.Dev != st.Dev || fst.Mode&unix.S_IFMT != unix.S_IFREG {
			f.Close()
			return errors.New("a file of the tree was replaced while it was hashed")
		}
		w.st.Files++
		w.st.Bytes += fst.Size
		if w.st.Bytes > MaxTreeBytes {
			f.Close()
			return fmt.Errorf("the tree's files hold more than %d bytes", int64(MaxTreeBytes))
		}
		w.jobs <- hashJob{name: name, f: f, size: fst.Size}
	default:
		return errors.New("the tree holds a file that is neither a regular file, a folder nor a symbolic link")
	}
	if w.st.Files+w.st.Symlinks > MaxTreeFiles {
		return fmt.Errorf("the tree holds more than %d files", MaxTreeFiles)
	}
	return nil
}
