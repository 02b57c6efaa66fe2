package launch

import (
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps launch low in the graph: it composes the canonical
// form (canon), the frame envelope (jsonrpc) and the server interface it
// implements (stdio), opens its files through the safe opener
// (internal/atomicfile), and knows nothing of pins, the gate, policy or the
// command line.
func TestImports(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{
		"github.com/mcpseal/mcpseal/canon":               true,
		"github.com/mcpseal/mcpseal/internal/atomicfile": true,
		"github.com/mcpseal/mcpseal/jsonrpc":             true,
		"github.com/mcpseal/mcpseal/stdio":               true,
		"golang.org/x/sys/unix":                          true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(token.NewFileSet(), name, nil, goparser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") && !allowed[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}
