package lock

import (
	"errors"
	"fmt"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrInsideRepository: a host config, key file or sequence store lies in
// the repository that holds the lock. Whoever writes the lock could then
// choose the keys it is checked with, or reset the sequence.
var ErrInsideRepository = errors.New("lock: host files must live outside the repository that holds the lock")

// maxGitFile bounds a .git file (a worktree's or a submodule's pointer).
const maxGitFile = 4096

// RepositoryRoot returns the folder that the lock's writers control: the
// nearest folder at or above dir that holds a .git entry (a folder, or a
// linked worktree's .git file). A submodule's .git file (its gitdir lies
// under a modules/ folder) sends the search on to the superproject. With
// no .git entry at or above dir, dir itself is the root.
func RepositoryRoot(dir string) (string, error) {
	start, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if start, err = filepath.EvalSymlinks(start); err != nil {
		return "", err
	}
	root := ""
	for d := start; ; {
		fi, err := os.Lstat(filepath.Join(d, ".git"))
		switch {
		case err == nil && fi.IsDir():
			return d, nil
		case err == nil && fi.Mode().IsRegular():
			if !isSubmoduleGitFile(filepath.Join(d, ".git")) {
				return d, nil
			}
			root = d // keep looking for the superproject
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if root != "" {
		return root, nil
	}
	return start, nil
}

// isSubmoduleGitFile reports whether a .git file points into a
// superproject's modules folder.
func isSubmoduleGitFile(path string) bool {
	b, err := atomicfile.ReadFile(path, maxGitFile)
	if err != nil {
		return false
	}
	line, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return false
	}
	p := filepath.ToSlash(strings.TrimSpace(line))
	return strings.Contains(p, "/modules/") || strings.HasPrefix(p, "modules/")
}

// checkOutside refuses path when it lies at or below root. Folders are
// compared by identity (device and inode), so a symlink, a case-folded
// spelling or a ".." is judged where it lands: the path's folder must
// exist and is resolved as the system would resolve it, and an existing
// file that is a symlink is judged both where it sits and where it points.
func checkOutside(root, path, what string) error {
	rootInfo, err := os.Stat(root)
	if err != nil {
		return err
	}
	raw := path
	if !filepath.IsAbs(raw) {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		raw = wd + string(filepath.Separator) + raw // not Clean: ".." must follow symlinks
	}
	i := strings.LastIndexAny(raw, `/`+string(filepath.Separator))
	base := raw[i+1:]
	if base == "" || base == "." || base == ".." {
		return fmt.Errorf("%s %s does not name a file", what, path)
	}
	dir, err := filepath.EvalSymlinks(raw[:i+1])
	if err != nil {
		return fmt.Errorf("the folder of the %s %s does not exist or cannot be read", what, path)
	}
	places := []string{dir}
	if target, err := filepath.EvalSymlinks(raw); err == nil {
		places = append(places, target)
	}
	for _, p := range places {
		if under(rootInfo, p) {
			return fmt.Errorf("%w: the %s %s is inside %s", ErrInsideRepository, what, path, root)
		}
	}
	return nil
}

// under reports whether p, or a folder above it, is root.
func under(root os.FileInfo, p string) bool {
	for d := p; ; {
		if fi, err := os.Stat(d); err == nil && os.SameFile(fi, root) {
			return true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}
