package winshim

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "launch/winshim")
}

// files is a fake Windows disk: case-insensitive, as NTFS is by default.
func files(paths ...string) func(string) bool {
	m := map[string]bool{}
	for _, p := range paths {
		m[strings.ToLower(p)] = true
	}
	return func(p string) bool { return m[strings.ToLower(p)] }
}

func TestResolve(t *testing.T) {
	t.Parallel()
	disk := files(
		`C:\Program Files\nodejs\npx.cmd`,
		`C:\Program Files\nodejs\node.exe`,
		`C:\Users\me\.local\bin\uvx.exe`,
		`C:\tools\both.bat`, `C:\tools\both.exe`,
		`C:\project\npx.cmd`, // planted in the current folder
		`C:\tools\run.BAT`,
	)
	path := `C:\Windows\System32;"C:\Program Files\nodejs";C:\Users\me\.local\bin\;.;C:\tools`
	for _, c := range []struct{ name, pathext, want string }{
		{"npx", "", `C:\Program Files\nodejs\npx.cmd`},
		{"NPX", "", `C:\Program Files\nodejs\NPX.cmd`},
		{"node", "", `C:\Program Files\nodejs\node.exe`},
		{"uvx", "", `C:\Users\me\.local\bin\uvx.exe`},
		{"both", "", `C:\tools\both.exe`},          // .EXE comes before .BAT in PATHEXT
		{"both", ".BAT;.EXE", `C:\tools\both.bat`}, // PATHEXT's order decides
		{"npx.cmd", "", `C:\Program Files\nodejs\npx.cmd`},
		{`C:\tools\run`, "", `C:\tools\run.BAT`},
		{`C:\tools\run.bat`, "", `C:\tools\run.bat`},
		{"run", "", `C:\tools\run.BAT`},
	} {
		got, err := Resolve(c.name, path, c.pathext, disk)
		if err != nil || !strings.EqualFold(got, c.want) {
			t.Errorf("Resolve(%q, PATHEXT=%q) = %q, %v; want %q", c.name, c.pathext, got, err, c.want)
		}
	}
	for _, name := range []string{"missing", `C:\nowhere\npx`, ""} {
		if got, err := Resolve(name, path, "", disk); err == nil {
			t.Errorf("Resolve(%q) = %q", name, got)
		}
	}
}

// TestPlantedShimInCurrentFolderIgnored: a npx.cmd in the project folder
// never shadows the one on PATH (Windows' own search would try the
// current folder first).
func TestPlantedShimInCurrentFolderIgnored(t *testing.T) {
	t.Parallel()
	disk := files(`npx.cmd`, `.\npx.cmd`, `C:\Program Files\nodejs\npx.cmd`)
	got, err := Resolve("npx", `.;C:\Program Files\nodejs`, "", disk)
	if err != nil || got != `C:\Program Files\nodejs\npx.cmd` {
		t.Errorf("Resolve = %q, %v", got, err)
	}
	if _, err := Resolve("npx", `.`, "", disk); err == nil {
		t.Error("found npx in the current folder")
	}
}

const cmdExe = `C:\Windows\System32\cmd.exe`

func TestBatchCommandLine(t *testing.T) {
	t.Parallel()
	script := `C:\Program Files\nodejs\npx.cmd`
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-y", "@modelcontextprotocol/server-memory"}, `-y @modelcontextprotocol/server-memory`},
		{[]string{"mcpseal@0.3.0", "run", "--name", "m", "--"}, `mcpseal@0.3.0 run --name m --`},
		{[]string{""}, `""`},
		{[]string{"two words"}, `"two words"`},
		{[]string{`C:\dir\`}, `"C:\dir\\"`},
		{[]string{`C:\dir\file`}, `C:\dir\file`},
		{[]string{`say "hi"`}, `"say ""hi"""`},
		{[]string{`a\"b`}, `"a\\""b"`},
		{[]string{"100%"}, `"100%%cd:~,%"`},
		{[]string{"%PATH%"}, `"%%cd:~,%PATH%%cd:~,%"`},
		{[]string{"a&b"}, `"a&b"`},
		{[]string{"x|y", "<in", ">out", "^", "(a)", "!v!"}, `"x|y" "<in" ">out" "^" "(a)" "!v!"`},
		{[]string{"tab\there"}, "\"tab\there\""},
		{[]string{"é"}, `é`},
	} {
		got, err := BatchCommandLine(cmdExe, script, c.args)
		want := `"` + cmdExe + `" /e:ON /v:OFF /d /c ""` + script + `" ` + c.want + `"`
		if err != nil || got != want {
			t.Errorf("args %q:\n got %s (%v)\nwant %s", c.args, got, err, want)
		}
	}
	if got, err := BatchCommandLine(cmdExe, script, nil); err != nil || got != `"`+cmdExe+`" /e:ON /v:OFF /d /c ""`+script+`""` {
		t.Errorf("no args: %s, %v", got, err)
	}
}

// TestBatchArgumentInjection: the arguments that would make cmd.exe run a
// second command or expand a variable are all quoted and neutralised, and
// the ones it cannot carry are refused.
func TestBatchArgumentInjection(t *testing.T) {
	t.Parallel()
	for _, a := range []string{`"&calc.exe`, `x" & calc.exe & "`, `"|calc`, `a"^&calc`, `%COMSPEC%`, `\"&calc`} {
		line, err := BatchCommandLine(cmdExe, `C:\t\npx.cmd`, []string{a})
		if err != nil {
			t.Fatal(err)
		}
		// Outside cmd.exe's quotes there is nothing: every metacharacter
		// of the argument sits between a pair of quotes.
		if outside := unquoted(strings.TrimPrefix(line, `"`+cmdExe+`" /e:ON /v:OFF /d /c `)); strings.ContainsAny(outside, "&|<>^()") {
			t.Errorf("%q leaves %q outside quotes in %s", a, outside, line)
		}
		if !percentsNeutral(line) {
			t.Errorf("%q can still expand a variable: %s", a, line)
		}
	}
	for _, a := range []string{"line\nbreak", "cr\r", "nul\x00"} {
		if _, err := BatchCommandLine(cmdExe, `C:\t\npx.cmd`, []string{a}); !errors.Is(err, ErrArgument) {
			t.Errorf("%q: %v, want ErrArgument", a, err)
		}
	}
	for _, s := range []string{`C:\t\"x.cmd`, `C:\t\`, ""} {
		if _, err := BatchCommandLine(cmdExe, s, nil); err == nil {
			t.Errorf("script %q accepted", s)
		}
	}
}

// percentsNeutral reports whether every % in line is the first of a
// %%cd:~,% group, which cmd.exe reads as a literal % and an empty
// expansion, so that no %VAR% can form.
func percentsNeutral(line string) bool {
	return !strings.Contains(strings.ReplaceAll(line, "%%cd:~,%", ""), "%")
}

// unquoted is what cmd.exe reads outside double quotes, after it strips
// the outer pair /c adds (a "" inside quotes closes and reopens them).
func unquoted(s string) string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, `"`), `"`)
	var b strings.Builder
	in := false
	for _, r := range s {
		if r == '"' {
			in = !in
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestCmdExe(t *testing.T) {
	t.Parallel()
	if got := CmdExe(`D:\WINDOWS`); got != `D:\WINDOWS\System32\cmd.exe` {
		t.Errorf("CmdExe = %s", got)
	}
	if got := CmdExe(""); got != `C:\Windows\System32\cmd.exe` {
		t.Errorf("CmdExe() = %s", got)
	}
}

func FuzzBatchCommandLine(f *testing.F) {
	f.Add(`"&calc.exe`)
	f.Add("100%")
	f.Add(`C:\dir\`)
	f.Fuzz(func(t *testing.T, a string) {
		line, err := BatchCommandLine(cmdExe, `C:\t\npx.cmd`, []string{a})
		if err != nil {
			return
		}
		if outside := unquoted(strings.TrimPrefix(line, `"`+cmdExe+`" /e:ON /v:OFF /d /c `)); strings.ContainsAny(outside, "&|<>^()") {
			t.Fatalf("%q leaves %q outside quotes", a, outside)
		}
		if !percentsNeutral(line) {
			t.Fatalf("%q can still expand a variable: %s", a, line)
		}
	})
}
