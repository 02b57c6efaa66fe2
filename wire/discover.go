package wire

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// Servers a client loads from somewhere other than its own config file:
// Gemini CLI extensions (gemini.go), Claude Code plugins (claudeplugins.go).
// Those folders are written by other programs, and a plugin's files by
// whoever wrote the plugin: everything read there is bounded, a name read
// there is never used as a path without being checked, and a file that
// cannot be read is reported (status exits 1), never taken as "no
// servers".

// maxIndexSize bounds an index a client keeps of its extensions, plugins
// or marketplaces (installed_plugins.json, known_marketplaces.json, an
// extension's install record, a marketplace.json). Real ones are a few
// kilobytes; 8 MiB is far above any and keeps a planted file from
// exhausting memory.
const maxIndexSize = 8 << 20

// maxLoaded bounds how many extensions or plugins one client's index or
// folder may list: real machines have a handful; a planted index with
// millions of entries must not stall status.
const maxLoaded = 512

// maxServerFiles bounds the server files one plugin manifest may name.
const maxServerFiles = 16

// readIndex reads a client's index file as a JSON object, at most limit
// bytes. present is
// false when the file does not exist; any other failure (too large, not
// JSON, not an object, not a regular file) is an error.
func readIndex(path string, limit int64) (root *Node, present bool, err error) {
	src, err := atomicfile.ReadFileFollow(path, limit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	root, err = ParseJSONC(src)
	if err != nil {
		return nil, true, err
	}
	if root.Kind != Object {
		return nil, true, errors.New("not a JSON object")
	}
	return root, true, nil
}

// indexError is a File standing for servers discovery could not list.
func indexError(client, path, source, why string) File {
	return File{Client: client, Path: path, Shape: ShapeMCPServers, Source: source, err: why}
}

// stringMember returns the string member key of o; ok is false when it
// is absent, and err set when it is repeated or not a string.
func stringMember(o *Node, key string) (s string, ok bool, err error) {
	m, err := o.Get(key)
	if err != nil || m == nil {
		return "", false, err
	}
	if m.Value.Kind != String {
		return "", false, errors.New(key + " is not a string")
	}
	return m.Value.Str, true, nil
}

// subdirs lists the folders in dir (following symbolic links, as the
// clients do), sorted, at most maxLoaded; a missing dir is empty.
func subdirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(ents) > maxLoaded {
		return nil, errors.New("more folders than mcpseal reads")
	}
	var out []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// userFileWhyNot says why wrap may not edit path, a file a client loads
// servers from: it lies inside managed (a folder the client rewrites on
// update), or it is not a regular file the user owns. "" means it may.
func userFileWhyNot(path, managed, what string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return what + " mcpseal cannot resolve"
	}
	if m, err := filepath.EvalSymlinks(managed); err == nil && within(real, m) {
		return what + " inside the folder the client rewrites on update"
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return what + " that is not a regular file"
	}
	if !ownedByUser(fi) {
		return what + " owned by another user"
	}
	return ""
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
