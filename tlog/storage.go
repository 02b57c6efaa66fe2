package tlog

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// Storage is where a log's files live. Names are slash-separated paths
// relative to the log folder. The log reads and writes only through it,
// so that tests and benchmarks can keep a log in memory.
type Storage interface {
	// ReadFile returns the file's bytes, an error wrapping fs.ErrNotExist
	// when it is missing, and an error when it is larger than limit.
	ReadFile(name string, limit int64) ([]byte, error)
	// WriteFile replaces the file atomically: a reader sees the old bytes
	// or the new ones, never a mix.
	WriteFile(name string, data []byte) error
	// List returns the names of the regular files under dir, sorted. A
	// missing dir has none.
	List(dir string) ([]string, error)
}

// ErrTooLarge reports a file larger than the limit its reader set.
var ErrTooLarge = errors.New("tlog: file larger than its limit")

// A Dir is a log folder on disk. Every access is confined to the folder
// (os.Root): a symbolic link that leads out of it is not followed.
type Dir struct {
	root *os.Root
	path string
}

// OpenDir opens the log folder at dir, which must exist.
func OpenDir(dir string) (*Dir, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r, path: dir}, nil
}

// Path returns the folder's path.
func (d *Dir) Path() string { return d.path }

// Close releases the folder.
func (d *Dir) Close() error { return d.root.Close() }

func (d *Dir) ReadFile(name string, limit int64) ([]byte, error) {
	// O_NONBLOCK: a FIFO planted in the log folder must not block the
	// open; fstat below refuses it.
	f, err := d.root.OpenFile(name, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("tlog: %s is not a regular file", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s", ErrTooLarge, name)
	}
	return b, nil
}

func (d *Dir) WriteFile(name string, data []byte) error {
	dir := path.Dir(name)
	if err := d.root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := path.Join(dir, ".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		d.root.Remove(tmp)
		return err
	}
	if err := d.root.Rename(tmp, name); err != nil {
		d.root.Remove(tmp)
		return err
	}
	if df, err := d.root.OpenFile(dir, os.O_RDONLY|nonBlock, 0); err == nil {
		df.Sync()
		df.Close()
	}
	return nil
}

func (d *Dir) List(dir string) ([]string, error) {
	var out []string
	err := fs.WalkDir(d.root.FS(), dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipDir
			}
			return err
		}
		switch {
		case e.IsDir():
			return nil
		case strings.HasPrefix(path.Base(p), ".tmp-"):
			return nil // a write in progress or one a crash left
		case !e.Type().IsRegular():
			return fmt.Errorf("tlog: %s is not a regular file", p)
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}
