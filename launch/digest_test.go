//go:build unix

package launch

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mustTreeDigest(t *testing.T, dir string) string {
	t.Helper()
	d, _, err := TreeDigest(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestTreeDigestIsGoDirhash: without symbolic links, the digest is
// exactly Go's dirhash h1 of the folder (empty prefix), so other tools can
// compute it.
func TestTreeDigestIsGoDirhash(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"package.json":          `{"name":"x"}`,
		"dist/index.js":         "console.log(1)\n",
		"node_modules/a/a.js":   "a\n",
		"node_modules/a/b/c.js": "c\n",
	})
	got, st, err := TreeDigest(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := dirhash.HashDir(dir, "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("TreeDigest %s, dirhash %s", got, want)
	}
	if st.Files != 4 || st.Symlinks != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestTreeDigestSeesEveryChange(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"a.js": "a\n", "lib/b.js": "b\n"})
	base := mustTreeDigest(t, dir)
	for _, change := range []struct {
		name string
		do   func()
		undo func()
	}{
		{"content", func() { os.WriteFile(filepath.Join(dir, "a.js"), []byte("A\n"), 0o644) }, func() { os.WriteFile(filepath.Join(dir, "a.js"), []byte("a\n"), 0o644) }},
		{"new file", func() { os.WriteFile(filepath.Join(dir, "lib/c.js"), nil, 0o644) }, func() { os.Remove(filepath.Join(dir, "lib/c.js")) }},
		{"rename", func() { os.Rename(filepath.Join(dir, "lib/b.js"), filepath.Join(dir, "lib/B.js")) }, func() { os.Rename(filepath.Join(dir, "lib/B.js"), filepath.Join(dir, "lib/b.js")) }},
		{"symlink added", func() { os.Symlink("a.js", filepath.Join(dir, "link")) }, func() { os.Remove(filepath.Join(dir, "link")) }},
	} {
		change.do()
		if d := mustTreeDigest(t, dir); d == base {
			t.Errorf("%s: the digest did not change", change.name)
		}
		change.undo()
		if d := mustTreeDigest(t, dir); d != base {
			t.Errorf("%s undone: digest %s, want %s", change.name, d, base)
		}
	}
}

// TestTreeDigestDoesNotFollowLinks: a link's target text is pinned, not
// what it points to, and a link never leads the walk out of the tree.
func TestTreeDigestDoesNotFollowLinks(t *testing.T) {
	t.Parallel()
	outside := writeTree(t, map[string]string{"secret": "one\n", "sub/x": "x\n"})
	dir := writeTree(t, map[string]string{"a.js": "a\n"})
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "file-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "sub"), filepath.Join(dir, "dir-link")); err != nil {
		t.Fatal(err)
	}
	d1, st, err := TreeDigest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 1 || st.Symlinks != 2 {
		t.Errorf("stats %+v, want 1 file and 2 links", st)
	}
	os.WriteFile(filepath.Join(outside, "secret"), []byte("two\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "sub", "y"), []byte("y\n"), 0o644)
	if d2 := mustTreeDigest(t, dir); d2 != d1 {
		t.Errorf("changes outside the tree changed its digest")
	}
	// A regular file holding a link's target text is not the link.
	dir2 := writeTree(t, map[string]string{"a.js": "a\n", "file-link": filepath.Join(outside, "secret")})
	if err := os.Symlink(filepath.Join(outside, "sub"), filepath.Join(dir2, "dir-link")); err != nil {
		t.Fatal(err)
	}
	if d3 := mustTreeDigest(t, dir2); d3 == d1 {
		t.Errorf("a file with a link's text hashes like the link")
	}
}

func TestTreeDigestRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"a.js": "a\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := TreeDigest(dir); err == nil || !strings.Contains(err.Error(), "neither a regular file") {
		t.Errorf("TreeDigest with a FIFO: %v", err)
	}
}
