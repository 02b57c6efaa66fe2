package policy

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDependencies keeps the policy below the gate: it may use the format
// packages (contract, canon) and nothing else of mcpseal. The gate calls
// the policy, never the other way round.
func TestDependencies(t *testing.T) {
	t.Parallel()
	const module = "github.com/mcpseal/mcpseal/"
	allowed := []string{"contract", "canon"}
	files, err := filepath.Glob("*.go")
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
			if rel, ok := strings.CutPrefix(path, module); ok && !slices.Contains(allowed, rel) {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
