package wire

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

type enablementVector struct {
	Rules    []string `json:"rules"`
	Dir      string   `json:"dir"`
	Disabled bool     `json:"disabled"`
	Sure     bool     `json:"sure"`
}

func loadEnablementVectors(t testing.TB) []enablementVector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, "gemini-enablement.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Vectors []enablementVector }
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	return v.Vectors
}

// TestGeminiEnablementRulesMatchTheCLI: the override rules read as the
// Gemini CLI 0.61.0 reads them (the vectors were checked with its own
// code, run by node); where mcpseal cannot be sure, the extension counts
// as enabled.
func TestGeminiEnablementRulesMatchTheCLI(t *testing.T) {
	for _, v := range loadEnablementVectors(t) {
		g := geminiEnablement{"ext": v.Rules}
		want := v.Disabled && v.Sure
		if got := g.disabledIn("ext", v.Dir); got != want {
			t.Errorf("rules %q in %q: disabled %v, want %v", v.Rules, v.Dir, got, want)
		}
		if g.disabledIn("other", v.Dir) {
			t.Errorf("rules of ext disable another extension")
		}
	}
}

// enablementHome is the loaded home with the extensions' enablement file
// set to data.
func enablementHome(t *testing.T, data string) loadedHome {
	t.Helper()
	h := newLoadedHome(t)
	writeFiles(t, map[string]string{filepath.Join(h.home, ".gemini", "extensions", geminiEnablementFile): data})
	return h
}

// TestDisabledGeminiExtensionIsCountedAndMarked: an extension disabled
// for the folder status runs in is marked disabled, and still counted as
// not protected: `gemini mcp list` starts its servers. One disabled for
// another folder, or under a name that is not its gemini-extension.json
// name, is not marked.
func TestDisabledGeminiExtensionIsCountedAndMarked(t *testing.T) {
	h := enablementHome(t, `{"inst": {"overrides": ["!/work/*"]}, "linked": {"overrides": ["!/elsewhere/*"]}}`)
	o := testOptions(t)
	e := h.env()
	e.Dir = "/work/repo"
	r := Status(Existing(LoadedFiles(e)), o)
	got := servers(r)
	if s := got["extension inst/isrv"]; !s.Disabled || s.State != NotWrapped {
		t.Errorf("inst, disabled under /work: %+v", s)
	}
	if s := got["extension linked/lsrv"]; s.Disabled || s.State != NotWrapped {
		t.Errorf("linked, disabled elsewhere only: %+v", s)
	}
	if r.Enforcing() {
		t.Error("enforcing with a disabled extension's server unwrapped: gemini mcp list starts it")
	}
	// Without a known folder, nothing is marked.
	e.Dir = ""
	if s := servers(Status(Existing(LoadedFiles(e)), o))["extension inst/isrv"]; s.Disabled {
		t.Errorf("marked disabled with the folder unknown: %+v", s)
	}
}

// TestRedTeamHostileEnablementFileIsUnreadable: an enablement file the
// CLI and mcpseal could read differently (a repeated name or key, a
// wrong type, bad JSON) marks nothing disabled and is an unreadable file:
// status exits 1 and counts every extension's servers.
func TestRedTeamHostileEnablementFileIsUnreadable(t *testing.T) {
	for name, data := range map[string]string{
		"name twice":          `{"inst": {"overrides": []}, "inst": {"overrides": ["!/*"]}}`,
		"overrides twice":     `{"inst": {"overrides": [], "overrides": ["!/*"]}}`,
		"overrides not list":  `{"inst": {"overrides": "!/*"}}`,
		"rule not string":     `{"inst": {"overrides": ["!/*", 1]}}`,
		"entry not an object": `{"inst": ["!/*"]}`,
		"not an object":       `[{"inst": {"overrides": ["!/*"]}}]`,
		"not JSON":            `{"inst": {"overrides": ["!/*"]`,
	} {
		t.Run(name, func(t *testing.T) {
			h := enablementHome(t, data)
			e := h.env()
			e.Dir = "/work"
			r := Status(Existing(LoadedFiles(e)), testOptions(t))
			unreadable := false
			for _, f := range r.Files {
				unreadable = unreadable || (f.Error != "" && filepath.Base(f.Path) == geminiEnablementFile)
			}
			s := servers(r)["extension inst/isrv"]
			if !unreadable || s.Disabled || s.State != NotWrapped || r.Enforcing() {
				t.Fatalf("unreadable %v, inst %+v, enforcing %v", unreadable, s, r.Enforcing())
			}
		})
	}
}

// FuzzGeminiGlob: any rule and folder: no panic, and a rule mcpseal
// compiles matches the folder it names exactly.
func FuzzGeminiGlob(f *testing.F) {
	for _, v := range loadEnablementVectors(f) {
		for _, r := range v.Rules {
			f.Add(r, v.Dir)
		}
	}
	f.Fuzz(func(t *testing.T, rule, dir string) {
		g := geminiEnablement{"x": {rule}}
		_ = g.disabledIn("x", dir)
		if re, ok := geminiGlob(rule); ok && !containsStar(rule) && !re.MatchString(rule) {
			t.Fatalf("%q does not match itself", rule)
		}
	})
}

func containsStar(s string) bool {
	for i := range len(s) {
		if s[i] == '*' {
			return true
		}
	}
	return false
}
