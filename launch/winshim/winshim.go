// Package winshim starts Windows command shims correctly. npx, uvx and
// most package-manager launchers are .cmd or .bat files on Windows, which
// CreateProcess cannot run directly: they run under cmd.exe, which parses
// the command line with its own rules (metacharacters such as & | < > ^,
// %VAR% expansion even inside quotes), not with the C runtime's rules that
// Go's argument quoting follows. Handing a .cmd file and Go-quoted
// arguments to CreateProcess lets an argument that contains "&calc.exe"
// or "%PATH%" run a command or leak the environment (the "BatBadBut"
// class, CVE-2024-24576 in Rust).
//
// Resolve finds a command the way Windows does (PATHEXT, PATH; never the
// current folder), and BatchCommandLine builds the one command line that
// runs a shim with every argument arriving as written:
//
//	cmd.exe /e:ON /v:OFF /d /c ""C:\Program Files\nodejs\npx.cmd" -y "a&b" "100%%cd:~,%""
//
// Arguments with a newline, carriage return or NUL cannot pass through
// cmd.exe intact and are refused. The logic is pure (no build tags, no
// system calls) so that it is tested on every platform; package stdio
// uses it on Windows.
package winshim

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// ErrArgument refuses an argument cmd.exe cannot carry intact.
var ErrArgument = errors.New("an argument for a .cmd or .bat server holds a newline, carriage return or NUL, which cmd.exe cannot pass through intact")

// DefaultPathExt is Windows' PATHEXT when the variable is unset.
const DefaultPathExt = ".COM;.EXE;.BAT;.CMD"

// IsBatch reports whether path names a .bat or .cmd file.
func IsBatch(path string) bool {
	p := strings.ToLower(path)
	return strings.HasSuffix(p, ".bat") || strings.HasSuffix(p, ".cmd")
}

func hasSeparator(s string) bool { return strings.ContainsAny(s, `\/:`) }

func join(dir, name string) string {
	dir = strings.TrimRight(dir, `\/`)
	if dir == "" {
		return name
	}
	return dir + `\` + name
}

// candidates is name with each PATHEXT extension, or name alone when it
// already ends with one of them.
func candidates(name string, exts []string) []string {
	lower := strings.ToLower(name)
	for _, e := range exts {
		if strings.HasSuffix(lower, e) {
			return []string{name}
		}
	}
	out := make([]string, 0, len(exts))
	for _, e := range exts {
		out = append(out, name+e)
	}
	return out
}

func splitExts(pathext string) []string {
	if pathext == "" {
		pathext = DefaultPathExt
	}
	var exts []string
	for _, e := range strings.Split(pathext, ";") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if e[0] != '.' {
			e = "." + e
		}
		exts = append(exts, e)
	}
	return exts
}

// Resolve finds name the way Windows finds a command: a name with a folder
// is tried as given (with each PATHEXT extension unless it has one); a bare
// name is looked up in each PATH folder in order. The current folder is
// never searched (a planted npx.cmd in the project folder must not win).
// isFile reports whether a path is an existing regular file.
func Resolve(name, path, pathext string, isFile func(string) bool) (string, error) {
	if name == "" {
		return "", errors.New("no server command")
	}
	exts := splitExts(pathext)
	if hasSeparator(name) {
		for _, c := range candidates(name, exts) {
			if isFile(c) {
				return c, nil
			}
		}
		return "", fmt.Errorf("%q: no such file (tried the PATHEXT extensions)", name)
	}
	for _, dir := range strings.Split(path, ";") {
		dir = strings.Trim(strings.TrimSpace(dir), `"`)
		if !absWindows(dir) {
			// ".", ".\\", "node_modules\\.bin", "..\\tools", "" are read
			// from the folder the server starts in: a planted npx.cmd
			// there would win.
			continue
		}
		for _, c := range candidates(join(dir, name), exts) {
			if isFile(c) {
				return c, nil
			}
		}
	}
	return "", fmt.Errorf("%q: not found in PATH", name)
}

// absWindows reports whether dir is an absolute Windows path: a drive
// letter and a separator (C:\\x, C:/x), or a UNC path (\\\\host\\share).
func absWindows(dir string) bool {
	if len(dir) >= 3 && (dir[0]|0x20) >= 'a' && (dir[0]|0x20) <= 'z' && dir[1] == ':' && (dir[2] == '\\' || dir[2] == '/') {
		return true
	}
	return len(dir) >= 3 && (dir[:2] == `\\` || dir[:2] == "//") && dir[2] != '\\' && dir[2] != '/'
}

// CmdExe is the cmd.exe that runs shims: the one in the system folder,
// never %ComSpec% (which the environment may point anywhere).
func CmdExe(systemRoot string) string {
	if systemRoot == "" || strings.ContainsAny(systemRoot, `"`) {
		systemRoot = `C:\Windows`
	}
	return join(systemRoot, `System32\cmd.exe`)
}

// BatchCommandLine is the command line that runs script (a .cmd or .bat
// file's full path) with args under cmd.exe, so that the script sees
// every argument as written and cmd.exe interprets none of them.
//
//   - /d skips AutoRun commands from the registry, /e:ON enables the
//     extensions the %cd:~,% trick below needs, /v:OFF turns off !VAR!
//     expansion.
//   - After /c, the whole command is wrapped in one more pair of quotes,
//     which cmd.exe strips.
//   - Each argument is quoted when it is empty, ends in a backslash, or
//     holds anything but letters, digits and #$*+-./:?@\_ (or a control
//     character); inside quotes " is doubled, and backslashes before a
//     quote are doubled.
//   - % becomes %%cd:~,%: an empty substring of %cd% that keeps cmd.exe
//     from expanding %VAR% (it expands inside quotes too).
func BatchCommandLine(cmdExe, script string, args []string) (string, error) {
	if script == "" || strings.ContainsAny(script, "\"\r\n\x00") || strings.HasSuffix(script, `\`) {
		return "", errors.New("a Windows file name cannot hold \" or end with \\")
	}
	var b strings.Builder
	b.WriteString(`"` + cmdExe + `" /e:ON /v:OFF /d /c ""`)
	b.WriteString(script)
	b.WriteByte('"')
	for _, a := range args {
		if strings.ContainsAny(a, "\r\n\x00") {
			return "", ErrArgument
		}
		b.WriteByte(' ')
		appendBatchArg(&b, a)
	}
	b.WriteByte('"')
	return b.String(), nil
}

func appendBatchArg(b *strings.Builder, a string) {
	quote := a == "" || strings.HasSuffix(a, `\`)
	for _, r := range a {
		if r < unicode.MaxASCII && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(`#$*+-./:?@\_`, r)) || unicode.IsControl(r) {
			quote = true
		}
	}
	if quote {
		b.WriteByte('"')
	}
	backslashes := 0
	for _, r := range a {
		if r == '\\' {
			backslashes++
			b.WriteRune(r)
			continue
		}
		switch r {
		case '"':
			b.WriteString(strings.Repeat(`\`, backslashes))
			b.WriteByte('"')
		case '%':
			b.WriteString("%%cd:~,")
		}
		backslashes = 0
		b.WriteRune(r)
	}
	if quote {
		b.WriteString(strings.Repeat(`\`, backslashes))
		b.WriteByte('"')
	}
}
