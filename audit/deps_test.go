package audit

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDependencies keeps the audit log below the gate: it may use the format
// packages (contract, canon) and nothing else of mcpseal; it knows
// nothing of the policy or the gate, which hand it events.
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
