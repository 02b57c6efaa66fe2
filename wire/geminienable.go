package wire

import (
	"errors"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Gemini CLI extension enablement (0.61.0, checked 2026-12-01 in its
// bundle: packages/cli/src/config/extensions/extensionEnablement.ts, and
// by running it in a fake home):
//
//   - `gemini extensions disable NAME [--scope user|workspace]` writes
//     extension-enablement.json in the extensions folder
//     ($GEMINI_CLI_HOME/.gemini/extensions when set): {NAME: {"overrides":
//     [RULE, ...]}}, NAME being the name in gemini-extension.json;
//   - a RULE is a folder path, "!" first to disable, "*" last for its
//     subfolders too ("!/home/me/*" for the user scope: the home folder,
//     which is GEMINI_CLI_HOME when set, and everything under it);
//   - an extension is enabled unless the last rule that matches the
//     folder the CLI runs in (with "/" added at both ends) disables it;
//     each rule is a glob whose every "*" (with a "/" before it) becomes
//     an optional "(/.*)?";
//   - a file the CLI cannot read or that is not exactly that shape makes
//     every extension enabled;
//   - a disabled extension's servers are not started in a session, but
//     `gemini mcp list` still starts them to test the connection (seen
//     with a server that leaves a file behind): status counts them as
//     any other, marked disabled.

// geminiEnablementFile is the enablement file's name in the extensions
// folder.
const geminiEnablementFile = "extension-enablement.json"

// geminiEnablement is what extension-enablement.json says: each
// extension's rules.
type geminiEnablement map[string][]string

// readGeminiEnablement reads the enablement file; a missing file is
// empty (every extension enabled).
func readGeminiEnablement(path string) (geminiEnablement, error) {
	root, present, err := readIndex(path, maxIndexSize)
	if err != nil || !present {
		return nil, err
	}
	if len(root.Members) > maxLoaded {
		return nil, errors.New("more extensions than mcpseal reads")
	}
	out := geminiEnablement{}
	for _, m := range root.Members {
		if _, dup := out[m.Key]; dup {
			return nil, errors.New("an extension is named twice")
		}
		if m.Value.Kind != Object {
			return nil, errors.New("an extension's entry is not an object")
		}
		o, err := m.Value.Get("overrides")
		if err != nil || o == nil || o.Value.Kind != Array || len(o.Value.Elems) > maxLoaded {
			return nil, errors.New("an extension's overrides are not a list mcpseal reads")
		}
		rules, ok := o.Value.Strings()
		if !ok {
			return nil, errors.New("an extension's overrides are not all strings")
		}
		out[m.Key] = rules
	}
	return out, nil
}

// disabledIn reports whether the CLI, run in the folder dir, would find
// the extension name disabled. It is false whenever that is not certain:
// dir unknown, or a path or rule the CLI's own matcher may read otherwise.
func (g geminiEnablement) disabledIn(name, dir string) bool {
	rules := g[name]
	if len(rules) == 0 || dir == "" || !geminiPlainText(dir) {
		return false
	}
	path := geminiSlashes(dir)
	enabled := true
	for _, r := range rules {
		disable := strings.HasPrefix(r, "!")
		re, ok := geminiGlob(strings.TrimPrefix(r, "!"))
		if !ok {
			return false
		}
		if re.MatchString(path) {
			enabled = !disable
		}
	}
	return !enabled
}

// geminiSlashes is ensureLeadingAndTrailingSlash: backslashes to "/",
// and a "/" at both ends.
func geminiSlashes(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

// geminiPlainText reports whether JavaScript's regular expressions and
// Go's agree on s: valid UTF-8 without the line terminators JavaScript's
// "." refuses and Go's accepts.
func geminiPlainText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsAny(s, "\r\u2028\u2029")
}

// geminiMaxRule bounds a rule status compiles: real ones are a folder
// path.
const geminiMaxRule = 4096

// geminiGlob is globToRegex: the characters .+?^${}()|[]\ escaped, then
// every "*", with the "/" before it if there is one, an optional group
// of any characters but line terminators, anchored at both ends.
func geminiGlob(rule string) (*regexp.Regexp, bool) {
	if len(rule) > geminiMaxRule || !geminiPlainText(rule) {
		return nil, false
	}
	const any = `[^\n\r\x{2028}\x{2029}]*`
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(rule); i++ {
		c := rule[i]
		switch {
		case c == '/' && i+1 < len(rule) && rule[i+1] == '*':
			b.WriteString("(/" + any + ")?")
			i++
		case c == '*':
			b.WriteString("(" + any + ")?")
		case strings.IndexByte(`.+?^${}()|[]\`, c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return re, err == nil
}
