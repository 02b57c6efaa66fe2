// Package atomicfile reads and writes the small files mcpseal keeps
// (pins, locks, manifests, records, client configs) the careful way:
// writes replace a file atomically — a temporary file in the same folder,
// fsync, rename, fsync of the folder — so a reader sees the old bytes or
// the new ones, never a mix, and a crash leaves one of the two; reads
// refuse anything that is not a regular file or is larger than the
// caller's limit, without reading more than the limit.
//
// # Special files
//
// A state file's name may have been replaced by something else: a FIFO
// (whose open blocks until a writer appears, forever), a socket, a device,
// a folder or a symbolic link to any of these or to another user's file.
// Every open here (Open, OpenFile, ReadFile and their Follow forms) looks
// at the name first and refuses what is visibly not a regular file, opens
// with O_NONBLOCK (so a FIFO planted in between cannot block the open),
// then checks the opened file with fstat. Refusals are errors that
// satisfy errors.Is(err, ErrNotRegular); the caller decides what they
// mean (the pin store: a tampered store).
//
// Open, OpenFile and ReadFile are for files mcpseal owns under its home:
// they never follow a symbolic link at the final name (O_NOFOLLOW; where
// the system has none, as on Windows, the name is compared with the
// opened file after the open). The folders above the name are resolved as
// the system resolves them: callers that own a folder check it themselves
// (see pin.Open). OpenFollow and ReadFileFollow follow a final symbolic
// link, for files a person names and may keep behind one (a client's
// config in a dotfiles repository, a mounted secret); what the link leads
// to must still be a regular file.
//
// Errors name the file by its base name and say what it is; they never
// hold the file's contents.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// WriteFile replaces path with data; perm is the new file's mode. The
// temporary file is created with O_EXCL under a random name, and the
// rename replaces the name itself: a FIFO or a symbolic link planted at
// path is replaced, never written through.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return writeFile(path, data, perm, true)
}

// WriteFileUnsynced replaces path with data as WriteFile does, atomically
// for readers (they see the old bytes or the new ones, never a mix), but
// makes neither durable: there is no fsync of the file or of its folder.
// After a crash the name may hold the old bytes, the new ones, or an
// empty or partial file (the rename reached the disk before the data).
// It is for files whose loss is harmless and whose readers take anything
// they cannot parse as absent: the pin store's last-seen times, written
// by every session before its first listing is released, where the two
// fsyncs cost more than the rest of the check.
func WriteFileUnsynced(path string, data []byte, perm os.FileMode) error {
	return writeFile(path, data, perm, false)
}

func writeFile(path string, data []byte, perm os.FileMode, durable bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(perm); err != nil && runtime.GOOS != "windows" {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if durable {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	if !durable {
		return nil
	}
	return SyncDir(dir)
}

// SyncDir makes a rename in dir durable. Windows has no folder fsync; the
// rename is what it is there. dir is opened without blocking and must be
// a folder.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.OpenFile(dir, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	fi, err := d.Stat()
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &NotRegularError{Name: filepath.Base(dir), Kind: Kind(fi.Mode()) + ", not a folder"}
	}
	return d.Sync()
}

// ReadFile reads the regular file at path, refusing one larger than limit
// and a symbolic link (see the package doc). A missing file's error
// satisfies errors.Is(err, fs.ErrNotExist); a name that is not a regular
// file's satisfies errors.Is(err, ErrNotRegular).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, path, limit)
}

// ReadFileFollow is ReadFile for a file a person names: a final symbolic
// link is followed, and must lead to a regular file.
func ReadFileFollow(path string, limit int64) ([]byte, error) {
	f, err := OpenFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, path, limit)
}

// ErrTooLarge: the file is larger than its reader's limit.
var ErrTooLarge = errors.New("larger than its limit")

func readLimited(f *os.File, path string, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, tooLarge(path, limit)
	}
	// Read into a buffer of the size the file has (as os.ReadFile does;
	// io.ReadAll grows one by doubling, which for the 11 MB record of a
	// 10,000-tool server allocated 24 MB), one byte more to see its end,
	// and grow it only if the file grew.
	r := io.LimitReader(f, limit+1)
	data := make([]byte, 0, fi.Size()+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, limit)
	}
	return data, nil
}

func tooLarge(path string, limit int64) error {
	return fmt.Errorf("%s is %w of %d bytes", filepath.Base(path), ErrTooLarge, limit)
}
