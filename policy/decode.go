package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is the policy file's strict JSON decoder. encoding/json alone
// accepts too much for a file that grants authority: it matches keys case
// insensitively ("Deny" sets deny), lets a repeated key silently win, and
// reports an unknown key without saying where it is. The decoder here walks
// the token stream against the Go types of file.go first, and refuses, with
// line, column and the key path:
//
//   - a key the type does not declare, spelled exactly;
//   - a key repeated in one object;
//   - a value of the wrong JSON type, null anywhere, a number that is not
//     an integer where one is expected;
//   - invalid UTF-8, invalid JSON, anything after the top-level object.
//
// Only then does encoding/json fill the structs, from input the walk has
// proved unambiguous. The walk also records where every value starts, so
// that the semantic checks (check.go) can point at the offending line too.

// maxPolicyBytes bounds the policy file. It is written by a person: even
// a thousand server entries with tool rules fit in a few hundred KiB.
const maxPolicyBytes = 1 << 20

// maxPolicyDepth bounds nesting. The deepest legitimate value sits six
// levels down (servers.NAME.tools.TOOL.limits.call_timeout).
const maxPolicyDepth = 16

// A FileError reports a policy file that cannot be used: where (line and
// column, both from 1; zero when the file as a whole is at fault), which
// setting (Path, dotted: servers.memory.tools.read_graph.confirm) and why.
type FileError struct {
	File string
	Line int
	Col  int
	Path string
	Msg  string
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// walker checks one file's token stream against a Go type.
type walker struct {
	name string
	data []byte
	dec  *json.Decoder
	pos  map[string]int // path -> byte offset where its value starts
}

// decodeFile decodes data into f strictly. name is used in errors.
func decodeFile(name string, data []byte, f *fileJSON) (map[string]int, error) {
	w := &walker{name: name, data: data, pos: map[string]int{}}
	if len(data) > maxPolicyBytes {
		return nil, w.errAt(-1, "", fmt.Sprintf("the file is larger than %d bytes", maxPolicyBytes))
	}
	if !utf8.Valid(data) {
		return nil, w.errAt(invalidUTF8Offset(data), "", "invalid UTF-8")
	}
	w.dec = json.NewDecoder(bytes.NewReader(data))
	w.dec.UseNumber()
	if err := w.value(reflect.TypeFor[fileJSON](), "", 0); err != nil {
		return nil, err
	}
	end := w.start()
	if _, err := w.dec.Token(); err != io.EOF {
		return nil, w.errAt(end, "", "unexpected data after the top-level object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(f); err != nil {
		// The walk accepted exactly what the types declare; a failure here
		// is a mismatch between the two, reported without the input.
		return nil, w.errAt(-1, "", "the file does not decode")
	}
	return w.pos, nil
}

// start returns the offset of the next token: the decoder's offset past
// whitespace and the separators it elides.
func (w *walker) start() int {
	i := int(w.dec.InputOffset())
	for i < len(w.data) {
		switch w.data[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
			continue
		}
		break
	}
	return i
}

func (w *walker) token() (json.Token, int, error) {
	at := w.start()
	tok, err := w.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			at = int(se.Offset)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, len(w.data), w.errAt(len(w.data), "", "unexpected end of file")
		}
		return nil, at, w.errAt(at, "", "invalid JSON")
	}
	return tok, at, nil
}

// value checks the next value against t.
func (w *walker) value(t reflect.Type, path string, depth int) error {
	if depth > maxPolicyDepth {
		return w.errAt(w.start(), path, "nested too deep")
	}
	tok, at, err := w.token()
	if err != nil {
		return err
	}
	w.pos[path] = at
	if tok == nil {
		return w.errAt(at, path, "null is not allowed; leave the key out instead")
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if tok != json.Delim('{') {
			return w.errAt(at, path, "expected an object, found "+describe(tok))
		}
		return w.object(path, depth, func(key string, keyAt int) (reflect.Type, error) {
			f, ok := fieldByTag(t, key)
			if !ok {
				return nil, w.errAt(keyAt, path, fmt.Sprintf("unknown key %s (known keys: %s)", quoteKey(key), strings.Join(tagNames(t), ", ")))
			}
			return f.Type, nil
		})
	case reflect.Map:
		if tok != json.Delim('{') {
			return w.errAt(at, path, "expected an object, found "+describe(tok))
		}
		return w.object(path, depth, func(string, int) (reflect.Type, error) { return t.Elem(), nil })
	case reflect.Slice:
		if tok != json.Delim('[') {
			return w.errAt(at, path, "expected an array, found "+describe(tok))
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(t.Elem(), fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
		_, _, err := w.token() // ']'
		return err
	case reflect.String:
		if _, ok := tok.(string); !ok {
			return w.errAt(at, path, "expected a string, found "+describe(tok))
		}
	case reflect.Bool:
		if _, ok := tok.(bool); !ok {
			return w.errAt(at, path, "expected true or false, found "+describe(tok))
		}
	case reflect.Int, reflect.Int64:
		n, ok := tok.(json.Number)
		if !ok {
			return w.errAt(at, path, "expected an integer, found "+describe(tok))
		}
		if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
			return w.errAt(at, path, "expected an integer (no fraction or exponent, within 64 bits)")
		}
	default:
		panic("policy: no decoder for " + t.String())
	}
	return nil
}

// object walks the members of an object whose '{' was read; member gives
// the type of each key's value.
func (w *walker) object(path string, depth int, member func(key string, at int) (reflect.Type, error)) error {
	seen := map[string]bool{}
	for w.dec.More() {
		tok, at, err := w.token()
		if err != nil {
			return err
		}
		key := tok.(string) // the decoder only yields strings as keys
		if seen[key] {
			return w.errAt(at, path, fmt.Sprintf("key %s appears twice", quoteKey(key)))
		}
		seen[key] = true
		t, err := member(key, at)
		if err != nil {
			return err
		}
		if err := w.value(t, joinPath(path, key), depth+1); err != nil {
			return err
		}
	}
	_, _, err := w.token() // '}'
	return err
}

// errAt builds a FileError at byte offset off (-1: the whole file).
func (w *walker) errAt(off int, path, msg string) *FileError {
	e := &FileError{File: w.name, Path: path, Msg: msg}
	if off >= 0 {
		e.Line, e.Col = lineCol(w.data, off)
	}
	return e
}

// lineCol turns a byte offset into a line and a column counted in
// characters, both from 1.
func lineCol(data []byte, off int) (int, int) {
	off = min(off, len(data))
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	lineStart := bytes.LastIndexByte(data[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(data[lineStart:off])
}

func invalidUTF8Offset(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return 0
}

func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tagName(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

func tagNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		names = append(names, tagName(t.Field(i)))
	}
	slices.Sort(names)
	return names
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return "null"
}

// joinPath appends key to a dotted path, quoting keys that are not plain
// words so that a path names one place.
func joinPath(path, key string) string {
	k := key
	if !isPlainKey(key) {
		k = quoteKey(key)
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

func isPlainKey(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// quoteKey quotes a key for a message: ASCII only, at most 64 characters
// of it, so a key cannot carry terminal escapes or a paragraph.
func quoteKey(s string) string {
	const maxShown = 64
	if utf8.RuneCountInString(s) > maxShown {
		s = string([]rune(s)[:maxShown]) + "…"
	}
	return strconv.QuoteToASCII(s)
}
