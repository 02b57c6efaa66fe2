package lookup

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDependencies keeps the lookup server read-only over the log and the pin store: no gate, no transports, no crawler.
func TestDependencies(t *testing.T) {
	t.Parallel()
	const module = "github.com/mcpseal/mcpseal/"
	allowed := []string{"tlog", "pin", "contract", "canon", "jsonrpc", "internal/atomicfile"}
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
	walk("lookup", "lookup")
}
