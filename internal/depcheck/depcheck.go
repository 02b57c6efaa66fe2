// Package depcheck keeps mcpseal's dependencies pointing one way: a
// package's test names the mcpseal packages it may import, directly or
// through others, and depcheck fails the test on any other.
package depcheck

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/mcpseal/mcpseal/"

// Only fails t when the package pkg (a path inside the module, such as
// "pin") imports, directly or through the packages it imports, any mcpseal
// package that is not in allowed. Test files are not read. It is called
// from a test in pkg, whose working folder is pkg.
func Only(t *testing.T, pkg string, allowed ...string) {
	t.Helper()
	root := moduleRoot(t)
	seen := map[string]bool{}
	var walk func(dir, from string)
	walk = func(dir, from string) {
		if seen[dir] {
			return
		}
		seen[dir] = true
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range file.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				rel, ok := strings.CutPrefix(path, module)
				if !ok {
					continue
				}
				if !slices.Contains(allowed, rel) {
					t.Errorf("%s imports %s (via %s)", dir, path, from)
				}
				walk(rel, dir)
			}
		}
	}
	walk(pkg, pkg)
}

// moduleRoot finds the folder holding go.mod above the working folder.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("depcheck: no go.mod above the working folder")
		}
		dir = parent
	}
}
