package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// applyEdits returns src with the edits applied. Edits must not overlap.
func applyEdits(src []byte, edits []edit) ([]byte, error) {
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	var out bytes.Buffer
	last := 0
	for _, e := range edits {
		if e.start < last || e.end < e.start || e.end > len(src) {
			return nil, errors.New("internal error: overlapping edits")
		}
		out.Write(src[last:e.start])
		out.WriteString(e.text)
		last = e.end
	}
	out.Write(src[last:])
	return out.Bytes(), nil
}

// document is a parsed config file.
type document interface {
	// entries lists the servers in file order.
	entries() []*docEntry
	// value is the whole document as generic data, for verification.
	value() any
}

// docEntry is an entry with what its format needs to edit it.
type docEntry struct {
	Entry
	// start and end delimit the entry's own bytes: the JSON object, or the
	// TOML table from its header to the next table.
	start, end int
	// stdio returns the edits that set the launch line.
	stdio func(command string, args []string) ([]edit, error)
	// remote returns the edits that turn a remote entry into a stdio one.
	remote func(command string, args []string) ([]edit, error)
	// expect applies to the entry's generic value what stdio or remote
	// meant to do.
	expect func(m map[string]any, command string, args []string, fromRemote bool)
}

// parseDocument parses src in f's format.
func parseDocument(f File, src []byte) (document, error) {
	switch f.Shape {
	case ShapeCodex:
		return parseTOMLDoc(src)
	case ShapeVSCodeExtension, ShapeZedExtension:
		return parseExtensionDoc(f.Shape, src)
	case ShapeMarketplace:
		return parseMarketplaceDoc(src, f.market)
	}
	return parseJSONDoc(f.Shape, src)
}

// findEntry returns the entry with key k.
func findEntry(d document, k string) *docEntry {
	for _, e := range d.entries() {
		if e.key() == k {
			return e
		}
	}
	return nil
}

// entryValue navigates v by the entry's location.
func entryValue(v any, where []string) (map[string]any, bool) {
	for _, k := range where {
		var ok bool
		if v, ok = step(v, k); !ok {
			return nil, false
		}
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// step is the member k of an object, or, in an array, the element k
// names as "#N" (indexKey): a location's keys are read by the type of
// the value they step into, so an object key "#0" is never an index.
func step(v any, k string) (any, bool) {
	switch t := v.(type) {
	case map[string]any:
		return t[k], true
	case []any:
		i, ok := parseIndexKey(k)
		if !ok || i >= len(t) {
			return nil, false
		}
		return t[i], true
	}
	return nil, false
}

// indexKey is the location key of the element i of an array.
func indexKey(i int) string { return "#" + strconv.Itoa(i) }

// parseIndexKey reads an indexKey, in its canonical form only.
func parseIndexKey(k string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(k, "#"))
	if err != nil || n < 0 || !strings.HasPrefix(k, "#") || indexKey(n) != k {
		return 0, false
	}
	return n, true
}

// errVerify means an edit would have changed more than it meant to. The
// file is left as it was.
var errVerify = errors.New("the edited file did not read back as intended; the file was left as it was")

// verify checks that after is before with exactly the meant entry changes:
// for each key in want, the entry's generic value must equal want's, and
// everything else in the document must be unchanged.
func verify(f File, before, after document, want map[string]map[string]any) error {
	bv, av := deepCopy(before.value()), after.value()
	for k, m := range want {
		where := strings.Split(k, "\x00")
		if !setAt(bv, where, m) {
			return errVerify
		}
	}
	if !reflect.DeepEqual(bv, av) {
		return errVerify
	}
	return nil
}

// setAt replaces the value at where in v.
func setAt(v any, where []string, val any) bool {
	for i, k := range where {
		if i == len(where)-1 {
			m, ok := v.(map[string]any)
			if ok {
				m[k] = val
			}
			return ok
		}
		var ok bool
		if v, ok = step(v, k); !ok {
			return false
		}
	}
	return false
}

// deepCopy copies maps and slices of generic data.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		a := make([]any, len(t))
		for i, x := range t {
			a[i] = deepCopy(x)
		}
		return a
	case []map[string]any:
		a := make([]map[string]any, len(t))
		for i, x := range t {
			a[i] = deepCopy(x).(map[string]any)
		}
		return a
	}
	return v
}

// anyStrings converts strings to generic data.
func anyStrings(s []string) []any {
	a := make([]any, len(s))
	for i, x := range s {
		a[i] = x
	}
	return a
}

// jsonString encodes s as a JSON string, leaving <, > and & as they are.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(fmt.Sprintf("wire: encoding a string: %v", err)) // strings always encode
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// arrayStyle is how an existing array is laid out, so a replacement looks
// the same.
type arrayStyle struct {
	multiline         bool
	elemIndent, close string // multiline: indentation of elements and of ']'
	sep               string // single line: between elements
	pad               string // single line: inside the brackets
}

// styleOf reads the layout of the array at src[start:end] whose elements
// start and end at the given offsets.
func styleOf(src []byte, start, end int, elems [][2]int) arrayStyle {
	st := arrayStyle{sep: ", "}
	body := src[start:end]
	if len(elems) > 0 && bytes.IndexByte(body, '\n') >= 0 {
		st.multiline = true
		st.elemIndent = lineIndent(src, elems[0][0])
		st.close = lineIndent(src, end-1)
		return st
	}
	if len(elems) >= 2 {
		between := string(src[elems[0][1]:elems[1][0]])
		if between == "," {
			st.sep = ","
		}
	}
	if len(elems) > 0 && elems[0][0] > start+1 && src[start+1] == ' ' {
		st.pad = " "
	}
	return st
}

// lineIndent returns the whitespace that starts the line holding offset
// at, when only whitespace precedes at on that line; "" otherwise.
func lineIndent(src []byte, at int) string {
	i := at
	for i > 0 && src[i-1] != '\n' {
		i--
	}
	ind := src[i:at]
	if len(bytes.TrimLeft(ind, " \t")) != 0 {
		return ""
	}
	return string(ind)
}

// render writes items (already encoded) as an array in this style.
func (st arrayStyle) render(items []string) string {
	if len(items) == 0 {
		return "[]"
	}
	var b strings.Builder
	if st.multiline {
		b.WriteString("[\n")
		for i, it := range items {
			b.WriteString(st.elemIndent)
			b.WriteString(it)
			if i < len(items)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(st.close)
		b.WriteByte(']')
		return b.String()
	}
	b.WriteByte('[')
	b.WriteString(st.pad)
	b.WriteString(strings.Join(items, st.sep))
	b.WriteString(st.pad)
	b.WriteByte(']')
	return b.String()
}
