package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// readBounded reads a regular file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// writeFileAtomic replaces path with data: a temporary file in the same
// folder (created with mode), fsync, rename, fsync of the folder. Missing
// folders are created 0700.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".mcpseal-tmp-*")
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
	if err := f.Chmod(mode); err != nil && runtime.GOOS != "windows" {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// replaceConfig writes a client's config: through a symbolic link to its
// target, keeping the file's mode, and only if the file still holds old
// (a client that wrote it meanwhile wins; wrap is then run again).
func replaceConfig(path string, old, data []byte) error {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(target)
	if err != nil {
		return err
	}
	now, err := readBounded(target, maxConfigSize)
	if err != nil {
		return err
	}
	if !bytes.Equal(now, old) {
		return errors.New("the file changed while mcpseal was working; nothing was written, run the command again")
	}
	return writeFileAtomic(target, data, fi.Mode().Perm())
}

// backupDir makes a new timestamped folder under home/backups.
func backupDir(home string, now time.Time) (string, error) {
	base := filepath.Join(home, "backups")
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	stamp := now.UTC().Format("20060102T150405Z")
	for i := 1; ; i++ {
		name := stamp
		if i > 1 {
			name = fmt.Sprintf("%s-%d", stamp, i)
		}
		dir := filepath.Join(base, name)
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) || i > 1000 {
			return "", err
		}
	}
}

// backupPath is where a config's backup goes: its absolute path mirrored
// under the backup folder (a volume name like C: becomes C).
func backupPath(dir, path string) string {
	p := filepath.Clean(path)
	if v := filepath.VolumeName(p); v != "" {
		p = strings.TrimSuffix(v, ":") + p[len(v):]
	}
	return filepath.Join(dir, p)
}
