package winshim

import "testing"

// TestRedTeamRelativePathEntryPlantedShim: Resolve promises that the
// current folder is never searched ("a planted npx.cmd in the project
// folder must not win"), but it skips only "" and "." PATH entries: a
// relative entry such as `.\`, `bin` or `node_modules\.bin` is joined
// and looked up relative to the server's working folder (the project),
// so a planted .\npx.cmd or node_modules\.bin\npx.cmd wins over the
// real one further down PATH.
func TestRedTeamRelativePathEntryPlantedShim(t *testing.T) {
	for _, rel := range []string{`.\`, `./`, `node_modules\.bin`, `..\tools`} {
		planted := join(rel, "npx.cmd")
		real := `C:\Program Files\nodejs\npx.cmd`
		isFile := func(p string) bool { return p == planted || p == real }
		got, err := Resolve("npx", rel+`;C:\Program Files\nodejs`, "", isFile)
		if err != nil {
			t.Fatal(err)
		}
		if got != real {
			t.Errorf("PATH entry %q: Resolve picked %q (relative to the project folder), not %q", rel, got, real)
		}
	}
}
