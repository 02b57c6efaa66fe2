package wire

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// writeFileAtomic replaces path with data atomically, creating missing
// folders 0700.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, mode)
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
	now, err := atomicfile.ReadFile(target, maxConfigSize)
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
