package wire

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDependencies keeps wire a leaf: it edits files and imports nothing
// of mcpseal, so the gate, the transports and the pin store cannot reach
// a client's config through it. The run flag set comes in through
// RunSyntax.
func TestDependencies(t *testing.T) {
	t.Parallel()
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
			if strings.HasPrefix(path, "github.com/mcpseal/mcpseal/") && path != "github.com/mcpseal/mcpseal/internal/atomicfile" && path != "github.com/mcpseal/mcpseal/internal/launchline" {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
