package wire

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// fuzzSeeds loads the seeds of a fuzz target: the fake HOME's configs and
// testdata/wire/fuzz; it fails when it finds none.
func fuzzSeeds(f *testing.F, ext ...string) {
	n := 0
	for _, root := range []string{filepath.Join(testdata, "home"), filepath.Join(testdata, "fuzz")} {
		filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() {
				return err
			}
			for _, e := range ext {
				if strings.HasSuffix(p, e) {
					data, err := os.ReadFile(p)
					if err != nil {
						return err
					}
					f.Add(data)
					n++
				}
			}
			return nil
		})
	}
	if n == 0 {
		f.Fatal("no fuzz seeds found")
	}
}

// FuzzParseJSONC: the reader never panics; whatever strict JSON accepts it
// accepts with the same value; every span it reports lies in the input.
func FuzzParseJSONC(f *testing.F) {
	fuzzSeeds(f, ".json")
	f.Fuzz(func(t *testing.T, src []byte) {
		n, err := ParseJSONC(src)
		var want any
		d := json.NewDecoder(bytes.NewReader(src))
		d.UseNumber()
		strict := d.Decode(&want) == nil && len(bytes.Trim(src[d.InputOffset():], " \t\r\n")) == 0
		if strict && !bytes.HasPrefix(src, []byte{0xEF, 0xBB, 0xBF}) {
			if err != nil {
				t.Fatalf("strict JSON refused: %v", err)
			}
			if !reflect.DeepEqual(n.Value(), want) {
				t.Fatalf("value %v, encoding/json says %v", n.Value(), want)
			}
		}
		if err == nil {
			checkSpans(t, src, n)
		}
	})
}

func checkSpans(t *testing.T, src []byte, n *Node) {
	if n.Start < 0 || n.End > len(src) || n.Start >= n.End {
		t.Fatalf("span [%d,%d) outside the input", n.Start, n.End)
	}
	for _, m := range n.Members {
		if string(src[m.KeyStart]) != `"` || src[m.KeyEnd-1] != '"' {
			t.Fatalf("key span [%d,%d) is not a string", m.KeyStart, m.KeyEnd)
		}
		checkSpans(t, src, m.Value)
	}
	for _, e := range n.Elems {
		checkSpans(t, src, e)
	}
}

// FuzzWrapJSON: planning a wrap of any mcpServers file never panics, and
// an edit it would write reads back as exactly the meant change (the
// plan's own verification, which must never let anything else through).
func FuzzWrapJSON(f *testing.F) {
	fuzzSeeds(f, ".json")
	f.Fuzz(func(t *testing.T, src []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "mcp.json")
		if err := os.WriteFile(path, src, 0o600); err != nil {
			t.Fatal(err)
		}
		o := Options{Self: testSelf, Home: filepath.Join(dir, "home"), Run: fakeRun{}}
		for _, shape := range []Shape{ShapeMCPServers, ShapeVSCode, ShapeZed, ShapeClaudeCode} {
			p := PlanWrap([]File{{Client: "custom", Path: path, Shape: shape}}, o, &Records{Version: recordsVersion})
			fp := p.Files[0]
			if !fp.Writes() {
				continue
			}
			if _, err := ParseJSONC(fp.new); err != nil {
				t.Fatalf("%s: the wrapped file does not parse: %v", shape, err)
			}
			// Everything outside the changed entries is byte for byte the same.
			if !bytes.HasPrefix(fp.new, src[:fp.Changes[0].de.start]) && fp.Changes[0].Action == Wrap {
				t.Fatalf("%s: bytes before the first entry changed", shape)
			}
		}
	})
}

// FuzzScanTOML: the TOML scanner never panics, and on any file the real
// decoder accepts, every statement it finds decodes to the decoder's value.
func FuzzScanTOML(f *testing.F) {
	fuzzSeeds(f, ".toml")
	f.Fuzz(func(t *testing.T, src []byte) {
		var m map[string]any
		if _, err := toml.Decode(string(src), &m); err != nil {
			scanTOML(src)
			return
		}
		d, err := parseTOMLDoc(src)
		if err != nil {
			return // a form the scanner does not follow: the file is left alone
		}
		for _, e := range d.entries() {
			if e.Kind == Stdio && e.Command != m["mcp_servers"].(map[string]any)[e.Name].(map[string]any)["command"] {
				t.Fatalf("entry %q: command %q disagrees with the decoder", e.Name, e.Command)
			}
			if e.start > e.end || e.end > len(src) {
				t.Fatalf("entry span [%d,%d) outside the input", e.start, e.end)
			}
		}
	})
}

// loadedSlots are where FuzzLoadedServers plants its input in a fake
// home (newLoadedHome): every file discovery of extension and plugin
// servers reads.
var loadedSlots = []string{
	".claude/plugins/installed_plugins.json",
	".claude/plugins/known_marketplaces.json",
	".claude/settings.json",
	"../src/mkt/.claude-plugin/marketplace.json",
	"../src/mkt/plugins/dirplug/.claude-plugin/plugin.json",
	"../src/mkt/plugins/dirplug/.mcp.json",
	".claude/skills/sk/.mcp.json",
	".gemini/extensions/linked/.gemini-extension-install.json",
	".gemini/extensions/inst/gemini-extension.json",
	".gemini/extensions/extension-enablement.json",
	".claude/plugins/marketplaces/gh/.claude-plugin/marketplace.json",
	".codex/config.toml",
	".codex/plugins/cache/cmkt/cplug/1.0.0/.codex-plugin/plugin.json",
	".vscode/extensions/acme.mcp-1.0.0/package.json",
	".local/share/zed/extensions/installed/zx/extension.toml",
}

// FuzzLoadedServers: whatever a client's indexes, a plugin's manifest or
// an extension's files hold, discovery and status never panic, every file
// either lists its servers or is unreadable, and no server counts as
// protected unless its line starts this mcpseal.
func FuzzLoadedServers(f *testing.F) {
	var seeds [][]byte
	filepath.Walk(filepath.Join(testdata, "fuzz"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".json") {
			data, _ := os.ReadFile(p)
			seeds = append(seeds, data)
		}
		return nil
	})
	if len(seeds) == 0 {
		f.Fatal("no fuzz seeds found")
	}
	// Every slot and every seed at least once, in turn: the seed corpus
	// stays quick to run.
	for i := range max(len(seeds), len(loadedSlots)) {
		f.Add(uint8(i%len(loadedSlots)), seeds[i%len(seeds)])
	}
	f.Fuzz(func(t *testing.T, slot uint8, data []byte) {
		h := newLoadedHome(t)
		p := filepath.Join(h.home, loadedSlots[int(slot)%len(loadedSlots)])
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		o := testOptions(t)
		r := Status(Existing(LoadedFiles(h.env())), o)
		for _, s := range r.Servers {
			if s.State == Protected {
				t.Fatalf("protected: %+v", s)
			}
		}
		if r.Enforcing() {
			t.Fatal("enforcing with unwrapped servers planted")
		}
	})
}
