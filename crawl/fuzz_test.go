package crawl

import (
	"path"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/tlog"
)

// FuzzPackagePath: whatever a tarball names, an accepted path stays inside
// the package folder.
func FuzzPackagePath(f *testing.F) {
	for _, s := range []string{"package/a.js", "package/../x", "/etc/passwd", "package/a/../../b", "./package/x", "package//x", `package\..\x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		p, ok := packagePath(name)
		if !ok {
			return
		}
		if p == "" || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || path.Clean(p) != p || strings.Contains(p, `\`) {
			t.Fatalf("%q accepted as %q", name, p)
		}
	})
}

// FuzzParseSeed: an accepted seed names only valid identities, and every
// registry target a valid package name.
func FuzzParseSeed(f *testing.F) {
	f.Add([]byte(`{"servers": [{"package": "@modelcontextprotocol/server-memory"}, {"name": "docs", "command": ["node", "s.js"]}]}`))
	f.Add([]byte(`{"servers": [{"package": "../../etc"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := ParseSeed(b, "/tmp")
		if err != nil {
			return
		}
		for _, tg := range ts {
			if !tlog.ValidServer(tg.ID) || (!tg.Local() && !validPackageName(tg.Package)) {
				t.Fatalf("accepted %+v", tg)
			}
		}
	})
}
