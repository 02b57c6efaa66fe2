package contract

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// This file owns how server-supplied text is handled as text.
//
// Server text reaches two audiences. Anything a model may read (errors,
// notifications, tool results of the lookup server) carries only SafeName
// forms of names, never the text itself. The terminal gets the text, but
// with every invisible or unusual character spelled out by VisibleText, so
// a reviewer sees what the model would receive.
//
// The text rules of the change labels (new-instruction, mentions-secrets,
// new-link, hidden-characters) live here too, next to the character
// classes they share with VisibleText.

// safeNameMax is the longest SafeName result, in runes, before the "~"
// marker: long enough for real tool names and URIs, short enough that a
// name cannot smuggle a sentence into an error message.
const safeNameMax = 64

// SafeName reduces server-supplied text to a character set that is safe in
// anything a model may read: it keeps ASCII letters, digits and _.:/- ,
// replaces every other rune (and every invalid UTF-8 byte) with '_',
// truncates to 64 runes with a trailing "~" when cut, and returns "_" for
// the empty string.
func SafeName(s string) string {
	if s == "" {
		return "_"
	}
	if isSafeName(s) {
		return s // the usual case, on every call: no copy
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == safeNameMax {
			b.WriteByte('~')
			break
		}
		if isSafeNameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		n++
	}
	return b.String()
}

// isSafeName reports whether SafeName would return s unchanged: ASCII
// safe characters only, at most safeNameMax of them.
func isSafeName(s string) bool {
	if len(s) > safeNameMax {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isSafeNameRune(rune(s[i])) {
			return false
		}
	}
	return true
}

func isSafeNameRune(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return true
	case r == '_', r == '.', r == ':', r == '/', r == '-':
		return true
	}
	return false
}

// VisibleText returns s with every invisible or unusual character written
// as a \u{...} escape of its code point in lowercase hex (\u{200b},
// \u{d}, \u{e0041}) and every invalid UTF-8 byte as \x{..} (\x{ff}). Newlines and tabs are kept. See
// isInvisible for the classes escaped.
func VisibleText(s string) string {
	return visible(s, false)
}

// visibleLine is VisibleText that also escapes newlines and tabs, for text
// that must stay on one terminal line (headers, label details).
func visibleLine(s string) string {
	return visible(s, true)
}

func visible(s string, oneLine bool) string {
	clean := true
	for _, r := range s {
		if ' ' <= r && r <= '~' {
			continue // printable ASCII is never invisible (TestPrintableASCIIIsVisible)
		}
		if r == utf8.RuneError || isInvisible(r) || (oneLine && (r == '\n' || r == '\t')) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x{%02x}`, s[i])
		case oneLine && (r == '\n' || r == '\t'):
			fmt.Fprintf(&b, `\u{%x}`, r)
		case isInvisible(r):
			fmt.Fprintf(&b, `\u{%x}`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isInvisible reports whether VisibleText escapes r: every character a
// reader cannot see or could mistake for another (hidden characters, see
// isHidden), carriage return, U+FFFD (it stands for bytes that were lost),
// and spaces and separators other than U+0020. Newline and tab are not
// included.
func isInvisible(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	if r == '\r' || r == utf8.RuneError || isHidden(r) {
		return true
	}
	return r != ' ' && unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp)
}

// isHidden reports whether r is a character that carries no visible glyph
// and has been used to hide text from a reviewer; the hidden-characters
// label fires on these. Carriage return, newline and tab are not hidden.
//
//   - controls: C0 except \t \n \r, DEL, C1 (category Cc)
//   - format characters (category Cf): soft hyphen U+00AD, zero-width
//     U+200B–U+200F, bidi embeddings and overrides U+202A–U+202E, word
//     joiner and invisible operators U+2060–U+2064, bidi isolates
//     U+2066–U+2069, BOM U+FEFF, interlinear annotation U+FFF9–U+FFFB,
//     tag characters U+E0001 and U+E0020–U+E007F, and the rest of Cf
//   - the whole tag block U+E0000–U+E007F, assigned or not
//   - variation selectors U+FE00–U+FE0F and U+E0100–U+E01EF, Mongolian
//     free variation selectors U+180B–U+180F
//   - fillers that render as nothing: combining grapheme joiner U+034F,
//     Hangul fillers U+115F, U+1160, U+3164, U+FFA0, Khmer inherent vowels
//     U+17B4, U+17B5, braille blank U+2800
//   - private use characters and noncharacters (no agreed glyph)
func isHidden(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	case 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0:
		return true
	}
	switch {
	case r < 0x20, 0x7F <= r && r <= 0x9F:
		return true
	case 0x180B <= r && r <= 0x180F:
		return true
	case 0xFE00 <= r && r <= 0xFE0F:
		return true
	case 0xE0000 <= r && r <= 0xE007F:
		return true
	case 0xE0100 <= r && r <= 0xE01EF:
		return true
	case 0xFDD0 <= r && r <= 0xFDEF, r&0xFFFE == 0xFFFE:
		return true
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co)
}

// The text rules look only at text that is new in the new version, so
// that wording a person already approved does not fire again:
//
//   - prose is every "description" and "title" string at any depth (tool,
//     property, prompt argument, annotations.title, output schema), every
//     string and key under a "default", "examples", "const" or "_meta"
//     member or under a schema member that is no keyword (proseMembers,
//     schemaKeywords), every enum value of several words, the "name" of
//     resources and resource templates, and the instructions; new prose is
//     the sentences of the new version not found, ignoring case and
//     spacing, anywhere in the old version's prose.
//   - choices are one-word strings where a schema offers values: enum
//     values, a default or const equal to one, a vendor member's words.
//   - new-instruction reads new prose, and new choices and field names
//     (property names, $defs keys) of four words or more once split at
//     _ - . and case; mentions-secrets reads all of those, new field names,
//     new choices of three words or more, and the path and file rules read
//     every new choice.
//   - new-link and hidden-characters read every string and every object key
//     anywhere in the definition (names, URIs, enum values, property names,
//     defaults, icons) and report what the old version did not contain;
//     new-link skips the definition's own name or URI (its identity, which
//     new-tool and friends report: the top-level member only) and the
//     string values of $schema and $id inside inputSchema and outputSchema.
//
// Before matching, prose is normalised so that hiding cannot split a word:
// hidden characters are dropped, tag characters are read as the ASCII they
// encode, fullwidth ASCII is folded and every space becomes U+0020.

// instructionRules match imperative wording aimed at the model. They only
// label, so they lean towards firing; each entry says what it is for.
var instructionRules = sync.OnceValue(func() *regexp.Regexp {
	return compileRules([]string{
		// Direct address to the model.
		`\b(?:you|the (?:model|assistant|agent|ai|llm))\s+(?:must|should|shall|need to|have to|are required to|will need to|may not|cannot|can't)\b`,
		`\b(?:always|never)\b`,
		`\b(?:do not|don't|must not|mustn't)\b`,
		// Overriding what the model was told before.
		`\b(?:ignore|disregard|forget|override)\s+(?:all|any|every|previous|prior|earlier|above|the above|other|your|these|those)\b`,
		`\b(?:you are now|from now on|act as|new instructions?|system prompt)\b`,
		// Ordering the model's other actions.
		`\bbefore\s+(?:using|calling|invoking|running|executing|you|responding|answering|replying|any)\b`,
		`\binstead of\b`,
		`\b(?:make sure|be sure to|ensure that|remember to|don't forget|do not forget)\b`,
		`\bimportant\b`,
		`\bwithout\s+(?:telling|asking|informing|notifying|confirming|mentioning|showing)\b`,
		// Moving data somewhere.
		`\bread\s+(?:the\s+(?:file|files|contents?)\b|[~/$%]\S*)`,
		`\bpass\s+(?:it|its|the|this|that|them|their|all)\s+(?:contents?|data|values?|outputs?|results?|text)\b`,
		`\b(?:send|forward|upload|post|transmit|exfiltrate|leak|copy)\s+(?:it|them|this|that|the|all|its|their|any|every|a copy|copies|contents?|data|everything)\b`,
		`\binclude\s+(?:the|all|any|its|their|your|this|that|full|entire|complete)\b[^.\n]{0,80}?\bin\s+(?:the|your|each|every|all|this|its)\b`,
		`\b(?:on|for|with|in|at|during)\s+(?:every|each|all)\s+(?:calls?|requests?|invocations?|uses?|responses?|messages?|queries)\b`,
		// Prompt-format markers that pose as another speaker.
		`<\s*/?\s*(?:important|system|instructions?|admin|secret|hidden|assistant|user)\s*>`,
		`(?m:^\s*(?:system|assistant|user|human)\s*:)`,
		`\[/?(?:inst|system)\]`,
		`<\|(?:im_start|im_end|system|user|assistant)\|>`,
	})
})

// secretRules match secrets, private files and the conversation itself
// (what an exfiltrating description asks for).
var secretRules = sync.OnceValue(func() *regexp.Regexp {
	return compileRules(append(slices.Clone(secretPathPatterns), secretWordPatterns...))
})

// secretPathRules are the secret rules for one-word choices (enum values
// and the defaults equal to one): only the paths and files. The words
// are ordinary choices there — an auth enum gaining "token", a Kubernetes
// kind "secret" — and would rank at the top of every such drift.
var secretPathRules = sync.OnceValue(func() *regexp.Regexp { return compileRules(secretPathPatterns) })

var secretPathPatterns = []string{
	// Dotfiles in the home folder, SSH material, dotfiles that hold tokens.
	`(?:~|\$home|%userprofile%)/\.[\w.-]+(?:/[\w.-]+)*`,
	`\B\.(?:ssh|aws|azure|kube|docker|gnupg|npmrc|pypirc|netrc|pgpass|git-credentials|bash_history|zsh_history|env)\b`,
	`\bid[_ ](?:rsa|dsa|ecdsa|ed25519)\b`,
	`\b(?:authorized_keys|known_hosts|kubeconfig|keychain|keyring)\b`,
	`/etc/(?:shadow|gshadow|passwd|sudoers|master\.passwd)\b`,
}

var secretWordPatterns = []string{
	// Words for secrets.
	`\b(?:api|access|auth|bearer|session|refresh|secret|personal access)[ _-]?(?:keys?|tokens?)\b`,
	`\b(?:private|ssh|signing)[ _-]?keys?\b`,
	`\b(?:seed|recovery|secret) phrases?\b`,
	`\b(?:credentials?|pass(?:word|wd|phrase)s?|tokens?|secrets?|cookies?|wallets?|mnemonics?)\b`,
	`\b(?:social security number|ssn|credit card numbers?|credit cards?)\b`,
	`\b(?:env|environment) var(?:iable)?s?\b|\bprocess\.env\b|\bos\.environ\b`,
	// The conversation and the user's own notes.
	`\b(?:conversation(?:s| history)?|chat (?:history|logs?|transcripts?)|(?:previous|prior|earlier|all|other) messages|notes|system prompt|(?:browser|shell) history)\b`,
}

// compileRules joins a rule table into one case-insensitive alternation;
// earlier entries win where two match at the same place.
func compileRules(rules []string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:` + strings.Join(rules, `)|(?:`) + `)`)
}

var (
	// urlRe matches scheme://... and the schemes that run or embed content.
	urlRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]{0,31}://[^\s<>"'` + "`" + `]+|\b(?:javascript|data):[^\s<>"'` + "`" + `]+`)
	})
	// emailRe matches an email address.
	emailRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b`)
	})
	// ipv4Re and ipv6Re find candidates that netip must then accept.
	ipv4Re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}\b`) })
	ipv6Re = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)[0-9a-f:]*:[0-9a-f:]*:[0-9a-f:]*(?:%[0-9a-z]+)?`)
	})
	// domainRe matches a host name ending in a common top-level domain.
	// Top-level domains that are also common file extensions (sh, py, md,
	// rs, so, zip, mov) are left out: they would fire on file names.
	domainRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:com|net|org|edu|gov|mil|int|io|ai|app|dev|co|me|info|biz|xyz|cloud|site|online|top|tech|store|shop|live|pro|link|click|page|host|website|space|fun|ru|cn|de|uk|us|eu|fr|jp|kr|br|au|ca|nl|ch|se|tk|ml|ga|cf|gq|pw|cc|tv|ws|ly|gg|su|ir|internal|local|localhost|onion|test|example|invalid|arpa)\b`)
	})
	// base64Re matches a long run of base64 characters; hiddenTokens keeps
	// only mixed-case runs with a digit, so hex digests and paths pass.
	base64Re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(fmt.Sprintf(`[A-Za-z0-9+/=]{%d,}`, minBase64Run)) })
)

// minBase64Run is the shortest base64-looking run worth a label: 40
// characters encode 30 bytes, longer than any word and most identifiers.
const minBase64Run = 40

// textInfo is the text of one version of a definition, gathered for the
// text rules.
type textInfo struct {
	prose  []string  // see the comment above instructionRules
	fields []string  // names of properties at any depth and of prompt arguments
	strs   []located // every string value and object key
	// choices are one-word strings where a schema offers values (see the
	// comment above instructionRules): the path and file rules read them
	// ("~/.ssh/id_rsa" as the default), the other rules only when they
	// split into a phrase ("send-api-key"), not "always" or "token".
	choices []string
}

// located is one string of a definition and the member path it sits at.
type located struct {
	path string
	s    string
	// notLink marks strings whose URLs are not links for new-link: the
	// definition's own name (a resource's URI is its identity, reported as
	// a new or removed definition) and schema identifiers ($schema, $id).
	notLink bool
}

func collectText(kind Kind, v map[string]any) *textInfo {
	t := &textInfo{}
	if v == nil {
		return t
	}
	t.walk(v, "", walkCtx{name: kind.NameMember()})
	if kind == Resources || kind == ResourceTemplates {
		if s, ok := v["name"].(string); ok {
			t.prose = append(t.prose, s)
		}
	}
	if kind == Prompts {
		args, _ := v["arguments"].([]any)
		for _, a := range args {
			if am, ok := a.(map[string]any); ok {
				if s, ok := am["name"].(string); ok {
					t.fields = append(t.fields, s)
				}
			}
		}
	}
	return t
}

// walkCtx is where walk stands in a definition. Each is decided by
// position, never by the path's text: a path is cut at what a detail
// quotes, and under a member named "" a nested "name" has the path
// "name" (red team: a link hidden there, as the definition's own name).
type walkCtx struct {
	name   string // the definition's own name member
	nested bool   // below the definition's own members
	schema bool   // inside inputSchema or outputSchema
	prose  bool   // strings here are prose
	names  bool   // the keys here are property or definition names
	// enum: the values of a schema's enum. One-word values are choices
	// ("always", "never"), which the instruction rules would read as
	// orders; a value of several words is a sentence the model reads, and
	// prose (red team: a payload sentence as a new enum value and its
	// default).
	enum   bool
	vendor bool // under a member no keyword names: one-word strings are choices
}

// wordy reports whether s holds more than one word.
func wordy(s string) bool { return strings.IndexFunc(strings.TrimSpace(s), unicode.IsSpace) >= 0 }

// enumHas reports whether enum is an array holding the string s.
func enumHas(enum any, s string) bool {
	vs, _ := enum.([]any)
	for _, v := range vs {
		if v == s {
			return true
		}
	}
	return false
}

// schemaKeywords are the JSON Schema keywords (draft 2020-12 and the
// older drafts', with OpenAPI's) whose values are structure, not text;
// every other member of a schema but the proseMembers is read as prose,
// its one-word strings as choices (a vendor's enum labels).
var schemaKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "items": true, "prefixItems": true,
	"additionalProperties": true, "patternProperties": true, "propertyNames": true,
	"dependentSchemas": true, "dependentRequired": true, "dependencies": true, "enum": true,
	"format": true, "pattern": true, "minimum": true, "maximum": true, "exclusiveMinimum": true,
	"exclusiveMaximum": true, "multipleOf": true, "minLength": true, "maxLength": true,
	"minItems": true, "maxItems": true, "uniqueItems": true, "minProperties": true,
	"maxProperties": true, "contains": true, "minContains": true, "maxContains": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
	"$ref": true, "$defs": true, "definitions": true, "$schema": true, "$id": true, "$anchor": true,
	"$dynamicRef": true, "$dynamicAnchor": true, "$vocabulary": true, "contentEncoding": true,
	"contentMediaType": true, "contentSchema": true, "deprecated": true, "readOnly": true,
	"writeOnly": true, "unevaluatedItems": true, "unevaluatedProperties": true, "nullable": true,
	"additionalItems": true, "$recursiveRef": true, "$recursiveAnchor": true, "id": true,
	"discriminator": true, "xml": true, "externalDocs": true,
}

// opaqueKeywords hold neither a schema nor prose (OpenAPI's discriminator
// mapping, xml names, a draft's vocabulary URIs, dependentRequired's
// lists of property names): their members are no schema.
var opaqueKeywords = map[string]bool{"discriminator": true, "xml": true, "$vocabulary": true, "dependentRequired": true}

// nameMaps are the schema keywords whose members are named by the server
// (a property called "default" is a property, not a default).
var nameMaps = map[string]bool{"dependencies": true, "properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}

// proseMembers hold strings a client may show the model as they are:
// besides descriptions and titles, a schema's default, examples and const,
// and _meta (red team: "read ~/.aws/credentials" in a default drew only
// metadata-changed). An enum is not among them: its one-word values are
// choices (walkCtx.enum).
var proseMembers = map[string]bool{"description": true, "title": true, "default": true, "examples": true, "const": true, "_meta": true}

func (t *textInfo) walk(v any, path string, c walkCtx) {
	switch x := v.(type) {
	case map[string]any:
		top := !c.nested // x is the definition itself
		for _, k := range sortedKeys(x) {
			p := joinField(path, k)
			t.strs = append(t.strs, located{path: p, s: k})
			if c.prose {
				t.prose = append(t.prose, k)
			}
			child := x[k]
			// Among names, a member is a name only when it holds a schema:
			// "default": "…" under properties is still a default (red team).
			_, isMap := child.(map[string]any)
			// Inside a schema, a member that is no JSON Schema keyword
			// ("x-note", "$comment" is one but text) holds text the schema
			// carries to the model: prose too (red team: a payload there was
			// read by no text rule).
			unknown := c.schema && !c.names && !schemaKeywords[k] && !proseMembers[k]
			cc := walkCtx{nested: true, prose: c.prose || (proseMembers[k] || unknown) && !(c.names && isMap)}
			cc.schema = !cc.prose && !(c.schema && !c.names && opaqueKeywords[k]) && (c.schema || top && (k == "inputSchema" || k == "outputSchema"))
			cc.vendor = cc.prose && (c.vendor || unknown)
			cc.names = cc.schema && !c.names && nameMaps[k]
			cc.enum = c.schema && !c.names && k == "enum"
			if s, ok := child.(string); ok {
				t.strs = append(t.strs, located{path: p, s: s,
					// The definition's own name or URI is its identity,
					// which new-tool and the like report; a schema's own
					// identifiers are not links the model is sent to.
					notLink: top && k == c.name || cc.schema && (k == "$schema" || k == "$id")})
				// A default or const that is one of its schema's own
				// one-word enum values ("always", "never") is a choice, not
				// wording, as those values are (see walkCtx.enum).
				switch {
				case c.schema && !c.names && (k == "default" || k == "const") && !wordy(s) && enumHas(x["enum"], s):
					t.choices = append(t.choices, s)
				case cc.vendor && !wordy(s):
					t.choices = append(t.choices, s)
				case cc.prose || k == "description" || k == "title":
					t.prose = append(t.prose, s)
				}
				continue
			}
			if m, ok := child.(map[string]any); ok && cc.names {
				// Property names, and $defs keys and the like: the model
				// reads them with the schema.
				t.fields = append(t.fields, sortedKeys(m)...)
			}
			t.walk(child, p, cc)
		}
	case []any:
		c.names = false // an array is no name map, whatever member holds it
		for i, e := range x {
			ec := c
			if _, ok := e.(string); !ok && c.enum {
				// An object or array as an enum value is a value the model
				// reads as written, not a schema.
				ec.prose, ec.schema, ec.enum = true, false, false
			}
			t.walk(e, capPath(path+"["+strconv.Itoa(i)+"]"), ec)
		}
	case string:
		// An element of an array (a direct member is taken above).
		t.strs = append(t.strs, located{path: path, s: x})
		switch {
		case c.vendor && !wordy(x):
			t.choices = append(t.choices, x)
		case c.prose || c.enum && wordy(x):
			t.prose = append(t.prose, x)
		case c.enum:
			t.choices = append(t.choices, x)
		}
	}
}

func instructionsText(p *string) *textInfo {
	t := &textInfo{}
	if p != nil {
		t.prose = []string{*p}
		t.strs = []located{{path: "instructions", s: *p}}
	}
	return t
}

// textRules adds the labels of the text rules for new text.
func (l *labeler) textRules(old, new *textInfo) {
	added := addedSentences(old.prose, new.prose)
	choices := addedSentences(old.choices, new.choices)
	oldFields := make(map[string]bool, len(old.fields))
	for _, f := range old.fields {
		oldFields[f] = true
	}
	var newFields []string
	for _, f := range new.fields {
		if !oldFields[f] {
			newFields = append(newFields, fieldWords(f))
		}
	}
	// A choice or a name of four words or more, split at _ - . and case
	// ("ignore_all_previous_instructions"), is a sentence in one word: the
	// model reads it as one, and so do the instruction rules (red team).
	var sentences, phrases []string
	for _, w := range append(slices.Clone(newFields), choices...) {
		if w = fieldWords(w); len(strings.Fields(w)) >= 4 {
			sentences = append(sentences, w)
		}
	}
	// A choice of three words or more is a phrase ("send-api-key"): every
	// secret rule reads it, as written (process.env) and split.
	for _, c := range choices {
		if w := fieldWords(c); len(strings.Fields(w)) >= 3 {
			phrases = append(phrases, c, w)
		}
	}
	if m := matchRules(instructionRules(), append(slices.Clone(added), sentences...)); len(m) > 0 {
		l.add(CodeNewInstruction, "New instruction to the model: %s", listSome(m))
	}
	secretText := append(append(append(slices.Clone(added), newFields...), sentences...), phrases...)
	m := matchRules(secretRules(), secretText)
	for _, c := range matchRules(secretPathRules(), choices) {
		if !slices.Contains(m, c) {
			m = append(m, c)
		}
	}
	if len(m) > 0 {
		l.add(CodeMentionsSecrets, "Mentions secrets or private files: %s", listSome(m))
	}
	if links := newLinks(old.strs, new.strs); len(links) > 0 {
		l.add(CodeNewLink, "New link or address: %s", listSome(links))
	}
	if hidden := newHidden(old.strs, new.strs); len(hidden) > 0 {
		l.add(CodeHiddenCharacters, "Hidden or unusual characters: %s", listSome(hidden))
	}
}

// normalizeForRules prepares text for the rules; see the comment above
// instructionRules().
func normalizeForRules(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteByte('\n')
		case 0xE0020 <= r && r <= 0xE007E:
			b.WriteRune(r - 0xE0000)
		case 0xFF01 <= r && r <= 0xFF5E:
			b.WriteRune(r - 0xFEE0)
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		case isHidden(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// sentences splits normalised text into sentences: at line ends, at CJK
// full stops, and at . ! ? followed by a space.
func sentences(s string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if t := strings.Join(strings.Fields(cur.String()), " "); t != "" {
			out = append(out, t)
		}
		cur.Reset()
	}
	rs := []rune(normalizeForRules(s))
	for i, r := range rs {
		if r == '\n' {
			flush()
			continue
		}
		cur.WriteRune(r)
		switch r {
		case '。', '！', '？':
			flush()
		case '.', '!', '?':
			if i+1 == len(rs) || rs[i+1] == ' ' || rs[i+1] == '\n' {
				flush()
			}
		}
	}
	flush()
	return out
}

// addedSentences returns the sentences of newProse that do not occur,
// ignoring case, anywhere in oldProse.
func addedSentences(oldProse, newProse []string) []string {
	seen := map[string]bool{}
	for _, p := range oldProse {
		for _, s := range sentences(p) {
			seen[strings.ToLower(s)] = true
		}
	}
	var out []string
	for _, p := range newProse {
		for _, s := range sentences(p) {
			if k := strings.ToLower(s); !seen[k] {
				seen[k] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// matchRules returns the distinct phrases re matches in texts, quoted for a
// detail, in order of first appearance.
func matchRules(re *regexp.Regexp, texts []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range texts {
		for _, m := range re.FindAllString(t, -1) {
			m = strings.ToLower(strings.Join(strings.Fields(m), " "))
			if m != "" && !seen[m] {
				seen[m] = true
				out = append(out, `"`+quote(m)+`"`)
			}
		}
	}
	return out
}

// fieldWords spells a field name as words for the secret rules:
// "apiKey" and "api_key" both read "api key".
func fieldWords(name string) string {
	var b strings.Builder
	prevLower := false
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.':
			b.WriteByte(' ')
			prevLower = false
		case unicode.IsUpper(r) && prevLower:
			b.WriteByte(' ')
			b.WriteRune(r)
			prevLower = false
		default:
			b.WriteRune(r)
			prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
		}
	}
	return b.String()
}

// linkTokens returns the links and addresses in s, lowercased: URLs, email
// addresses, IP addresses and domain names, each found once (a URL's host
// is not reported again on its own). hosts receives the hosts of URLs and
// email addresses, which count as already seen when s is old text.
func linkTokens(s string, hosts map[string]bool) []string {
	s = normalizeForRules(s)
	var out []string
	blank := func(re *regexp.Regexp, keep func(string) bool) {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			if keep(m) {
				out = append(out, strings.ToLower(m))
				return strings.Repeat(" ", len(m))
			}
			return m
		})
	}
	blank(urlRe(), func(m string) bool {
		if u, err := url.Parse(trimLink(m)); err == nil && u.Hostname() != "" {
			hosts[strings.ToLower(u.Hostname())] = true
		}
		return true
	})
	blank(emailRe(), func(m string) bool {
		hosts[strings.ToLower(m[strings.IndexByte(m, '@')+1:])] = true
		return true
	})
	blank(ipv4Re(), isIP)
	for _, loc := range ipv6Re().FindAllStringIndex(s, -1) {
		m := s[loc[0]:loc[1]]
		before, after := byte(' '), byte(' ')
		if loc[0] > 0 {
			before = s[loc[0]-1]
		}
		if loc[1] < len(s) {
			after = s[loc[1]]
		}
		if !isWordByte(before) && !isWordByte(after) && strings.Count(m, ":") >= 2 && isIP(m) {
			out = append(out, strings.ToLower(m))
		}
	}
	blank(domainRe(), func(string) bool { return true })
	for i, t := range out {
		out[i] = trimLink(t)
	}
	return out
}

// trimLink drops the punctuation that ends the sentence around a link, and
// closing brackets that the link did not open.
func trimLink(s string) string {
	// The brackets are counted once and the counts kept as the end is
	// trimmed: counting them again for every character dropped made a
	// link followed by many closing brackets quadratic (red team: 1.3 s
	// for 256 KiB).
	var open, shut [3]int
	for i := 0; i < len(s); i++ {
		if j := strings.IndexByte("([{", s[i]); j >= 0 {
			open[j]++
		} else if j := strings.IndexByte(")]}", s[i]); j >= 0 {
			shut[j]++
		}
	}
	for s != "" {
		c := s[len(s)-1]
		j := strings.IndexByte(")]}", c)
		switch {
		case strings.IndexByte(".,;:!?'\"", c) >= 0:
		case j >= 0 && open[j] < shut[j]:
			shut[j]--
		default:
			return s
		}
		s = s[:len(s)-1]
	}
	return s
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// newLinks returns the links in the new strings that the old ones lack,
// quoted for a detail; strings marked notLink are skipped.
func newLinks(old, new []located) []string {
	seen := map[string]bool{}
	for _, x := range old {
		if !x.notLink {
			for _, t := range linkTokens(x.s, seen) {
				seen[t] = true
			}
		}
	}
	var out []string
	for _, x := range new {
		if x.notLink {
			continue
		}
		for _, t := range linkTokens(x.s, map[string]bool{}) {
			if !seen[t] {
				seen[t] = true
				out = append(out, `"`+quote(t)+`"`)
			}
		}
	}
	return out
}

// hiddenTokens returns the runs of hidden characters in s and its long
// mixed-case base64-looking runs (outside data: URIs, which are declared
// binary).
func hiddenTokens(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		switch {
		case isHidden(r) && start < 0:
			start = i
		case !isHidden(r) && start >= 0:
			out = append(out, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	if strings.HasPrefix(s, "data:") && !strings.ContainsAny(s, " \n\t") {
		return out
	}
	for _, m := range base64Re().FindAllString(s, -1) {
		if strings.ContainsAny(m, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") &&
			strings.ContainsAny(m, "abcdefghijklmnopqrstuvwxyz") &&
			strings.ContainsAny(m, "0123456789") {
			out = append(out, m)
		}
	}
	return out
}

// newHidden describes the hidden runs of the new strings that the old ones
// lack, each with the member path where it first appears.
func newHidden(old, new []located) []string {
	seen := map[string]bool{}
	for _, x := range old {
		for _, t := range hiddenTokens(x.s) {
			seen[t] = true
		}
	}
	var out []string
	for _, x := range new {
		for _, t := range hiddenTokens(x.s) {
			if seen[t] {
				continue
			}
			seen[t] = true
			path := x.path
			if path == "" {
				path = "(value)"
			}
			out = append(out, describeHidden(t)+" in "+quote(path))
		}
	}
	return out
}

// describeHidden shows a hidden run: tag characters spelled out, other
// characters escaped (the first eight), base64 runs by length only.
func describeHidden(run string) string {
	if len(run) >= minBase64Run && base64Re().MatchString(run) && base64Re().FindString(run) == run {
		return fmt.Sprintf("base64-like run of %d characters", len(run))
	}
	rs := []rune(run)
	tags := true
	var spelled strings.Builder
	for _, r := range rs {
		if r < 0xE0020 || r > 0xE007E {
			tags = false
			break
		}
		spelled.WriteRune(r - 0xE0000)
	}
	if tags {
		return fmt.Sprintf(`%d tag characters spelling "%s"`, len(rs), quote(spelled.String()))
	}
	const most = 8
	if len(rs) > most {
		return fmt.Sprintf("%s… (%d characters)", visibleLine(string(rs[:most])), len(rs))
	}
	return visibleLine(run)
}
