package pin

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDependencies keeps the store below the gate: it may use the format
// packages (contract, canon) and nothing else of mcpseal.
func TestDependencies(t *testing.T) {
	t.Parallel()
	const module = "github.com/mcpseal/mcpseal/"
	allowed := []string{"contract", "canon", "internal/atomicfile"}
	seen := map[string]bool{}
	var walk func(dir, from string)
	walk = func(dir, from string) {
		if seen[dir] {
			return
		}
		seen[dir] = true
		files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
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
	walk("pin", "pin")
}
