package testmcp

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The toolkit must misbehave at the byte level, so it frames JSON-RPC
// itself: its package imports the standard library only (no SDK).
func TestImportsOnlyStandardLibrary(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		n++
		pf, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pf.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s: testmcp must use the standard library only", f, path)
			}
		}
	}
	if n == 0 {
		t.Fatal("no source files checked")
	}
}

// No production code imports the toolkit.
func TestNotImportedByTheBinary(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the go command is needed to list the binary's dependencies")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "mcpseal")); err != nil {
		t.Fatalf("cannot find cmd/mcpseal from %s: %v", root, err)
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/mcpseal")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/mcpseal: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "/internal/testmcp") {
			t.Errorf("the mcpseal binary depends on %s", dep)
		}
	}
}
