package policy

import "strings"

// Limits on a pointer shown in an error: enough to find the field in any
// realistic arguments object, too little to carry a message.
const (
	maxPointerTokens   = 16
	maxPointerTokenLen = 32
)

// SafePointer writes the tokens of a JSON value's location as a JSON
// pointer that is safe to show a model: each token keeps ASCII letters,
// digits and _.:- and has every other character replaced by '_' (so '/'
// and '~' never need escaping), is cut to 32 characters, and an empty
// token is written "_". Past 16 tokens the pointer ends in "/...". The root
// is "". The tokens come from the schema (property names) and from the
// arguments (member names): both are untrusted text.
func SafePointer(tokens []string) string {
	var b strings.Builder
	for i, t := range tokens {
		if i == maxPointerTokens {
			b.WriteString("/...")
			break
		}
		b.WriteByte('/')
		b.WriteString(safeToken(t))
	}
	return b.String()
}

func safeToken(t string) string {
	if t == "" {
		return "_"
	}
	var b strings.Builder
	n := 0
	for _, r := range t {
		if n == maxPointerTokenLen {
			break
		}
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9',
			r == '_', r == '.', r == ':', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		n++
	}
	return b.String()
}
