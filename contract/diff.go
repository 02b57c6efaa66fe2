package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// A diff between two contracts is a list of Changes, one per definition
// that was added, removed or changed (and one for the instructions), each
// with its labels. Compare computes it; RenderDiff shows it to a person.
//
// For example, when a weather tool's description starts asking for a
// credentials file and its schema gains a field to carry it, Compare
// returns one change, and RenderDiff writes:
//
//	changed tool get_weather
//	  label: New instruction to the model: "read the file", "pass its contents", "on every call"
//	  label: Mentions secrets or private files: "token", "~/.config/credentials"
//	  label: New field: context
//	--- pinned/get_weather
//	+++ observed/get_weather
//	@@ -1,9 +1,13 @@
//	 {
//	-  "description": "Get the current weather for a city.",
//	+  "description": "Get the current weather for a city. Regional forecast data requires [...]",
//	   "inputSchema": {
//	     "properties": {
//	       "city": {
//	         "description": "City name",
//	+        "type": "string"
//	+      },
//	+      "context": {
//	+        "description": "Regional calibration data",
//	         "type": "string"
//	       }
//	     },
//
// (testdata/contract/diff/weather-credentials.golden has it in full.)
//
// Only the codes of the labels, and names reduced by SafeName, may reach a
// model; names, details and the rendered diff are for the terminal.

// Op says what happened to one definition.
type Op string

const (
	OpAdded   Op = "added"
	OpRemoved Op = "removed"
	OpChanged Op = "changed"
)

// InstructionsKind is the pseudo-kind of the server's instructions in a
// Change. It is not in Kinds.
const InstructionsKind Kind = "instructions"

// A Change is what happened to one definition, or to the instructions, or
// (ProtocolKind) to the protocol version a session runs on.
type Change struct {
	Kind Kind `json:"kind"`
	// Name is server-supplied: never put it anywhere a model reads without
	// SafeName. It is "" for the instructions and the protocol.
	Name string `json:"name"`
	Op   Op     `json:"op"`
	// Old and New are the digests of the two versions ("" when absent);
	// for ProtocolKind, the two protocol versions.
	Old    string  `json:"old,omitempty"`
	New    string  `json:"new,omitempty"`
	Labels []Label `json:"labels"`
}

// Codes returns the distinct label codes of ch in order.
func (ch Change) Codes() []string {
	var codes []string
	for _, l := range ch.Labels {
		if !slices.Contains(codes, l.Code) {
			codes = append(codes, l.Code)
		}
	}
	return codes
}

// RiskFirst returns changes reordered, stably, most telling first: by
// the most telling tier among each change's labels (riskTier), and within
// a tier, more distinct text findings first. A report or an error that can
// show only the first few then shows what matters: Compare's own order (by
// kind, then name, the instructions last) let a server push a dangerous
// change behind fifty reworded tools, and two tiers behind a hundred new
// ones (red team). A server can still flood a tier with harmless changes
// of its own; ErrorData's label counts cover every change.
func RiskFirst(changes []Change) []Change {
	out := slices.Clone(changes)
	slices.SortStableFunc(out, func(a, b Change) int { return riskOf(a) - riskOf(b) })
	return out
}

// riskTier orders label codes by what a person must see first: text that
// speaks to the model, asks for secrets, hides or links somewhere; then
// permissions, the instructions and what no rule read; then the schema;
// then definitions added or removed. Codes not listed (wording-only,
// metadata-changed) come last; a protocol change counts as tier 1.
var riskTier = map[string]int{
	CodeNewInstruction: 0, CodeMentionsSecrets: 0, CodeHiddenCharacters: 0, CodeNewLink: 0,
	CodePermissionHint: 1, CodeInstructionsChanged: 1, CodeNotAnalysed: 1,
	CodeTypeChanged: 2, CodeRequiredExpanded: 2, CodeConstraintLoosened: 2, CodeEnumChanged: 2,
	CodeNewField: 2, CodeFieldRemoved: 2, CodeConstraintNarrowed: 2, CodeOutputSchemaAdded: 2, CodeOutputSchemaChanged: 2,
	CodeNewTool: 3, CodeNewPrompt: 3, CodeNewResource: 3, CodeNewResourceTemplate: 3, CodeRemoved: 3,
}

// riskOf is a change's sort key (lower first). A change with no label,
// which Compare never makes, counts as the most telling.
func riskOf(ch Change) int {
	const calm = 4
	if len(ch.Labels) == 0 {
		return 0
	}
	best, text := calm, 0
	for _, code := range ch.Codes() {
		t, ok := riskTier[code]
		switch {
		case !ok && ch.Kind == ProtocolKind:
			t = 1
		case !ok:
			t = calm
		}
		best = min(best, t)
		if t == 0 {
			text++
		}
	}
	added := 0
	if ch.Op == OpAdded {
		added = 5 // a server can add any number; it cannot change more than was approved
	}
	return best*10 + added - min(text, 4)
}

// LabelCounts counts, over every change, the changes that carry each
// label code.
func LabelCounts(changes []Change) map[string]int {
	n := make(map[string]int)
	for _, ch := range changes {
		for _, c := range ch.Codes() {
			n[c]++
		}
	}
	return n
}

// Compare returns the changes from old to new (a nil old means everything
// was added, a nil new that everything was removed), in a fixed order: by
// kind in the order of Kinds, then the instructions; within a kind by name
// (CompareUTF16). When one name has several definitions, identical ones
// cancel out and the rest pair up in digest order.
func Compare(old, new *Contract) []Change {
	var changes []Change
	b := newLabelBudget()
	for _, k := range Kinds {
		changes = append(changes, compareKind(b, k, defsOf(old, k), defsOf(new, k))...)
	}
	if ch, ok := compareInstructions(b, instructionsOf(old), instructionsOf(new)); ok {
		changes = append(changes, ch)
	}
	return changes
}

func defsOf(c *Contract, k Kind) []Definition {
	if c == nil {
		return nil
	}
	return c.Defs[k]
}

func instructionsOf(c *Contract) *string {
	if c == nil {
		return nil
	}
	return c.Instructions
}

func compareKind(lb *labelBudget, k Kind, old, new []Definition) []Change {
	group := func(defs []Definition) map[string][]Definition {
		m := make(map[string][]Definition, len(defs))
		for _, d := range defs {
			m[d.Name] = append(m[d.Name], d)
		}
		for _, g := range m {
			slices.SortFunc(g, func(a, b Definition) int { return strings.Compare(a.Digest, b.Digest) })
		}
		return m
	}
	o, n := group(old), group(new)
	names := unionKeys(o, n)
	slices.SortStableFunc(names, CompareUTF16)
	var changes []Change
	for _, name := range names {
		a, b := dropCommon(o[name], n[name])
		i := 0
		for ; i < len(a) && i < len(b); i++ {
			changes = append(changes, Change{Kind: k, Name: name, Op: OpChanged, Old: a[i].Digest, New: b[i].Digest,
				Labels: labelDefinitionWithin(lb, k, OpChanged, a[i].Canonical, b[i].Canonical)})
		}
		for _, d := range b[i:] {
			changes = append(changes, Change{Kind: k, Name: name, Op: OpAdded, New: d.Digest,
				Labels: labelDefinitionWithin(lb, k, OpAdded, nil, d.Canonical)})
		}
		for _, d := range a[i:] {
			changes = append(changes, Change{Kind: k, Name: name, Op: OpRemoved, Old: d.Digest,
				Labels: labelDefinitionWithin(lb, k, OpRemoved, d.Canonical, nil)})
		}
	}
	return changes
}

// dropCommon removes the definitions present (by digest) on both sides,
// one for one. Both lists are sorted by digest.
func dropCommon(a, b []Definition) ([]Definition, []Definition) {
	var ra, rb []Definition
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i].Digest, b[j].Digest); {
		case c == 0:
			i++
			j++
		case c < 0:
			ra = append(ra, a[i])
			i++
		default:
			rb = append(rb, b[j])
			j++
		}
	}
	return append(ra, a[i:]...), append(rb, b[j:]...)
}

func compareInstructions(b *labelBudget, old, new *string) (Change, bool) {
	ch := Change{Kind: InstructionsKind}
	switch {
	case old == nil && new == nil:
		return ch, false
	case old == nil:
		ch.Op = OpAdded
	case new == nil:
		ch.Op = OpRemoved
	case *old == *new:
		return ch, false
	default:
		ch.Op = OpChanged
	}
	if d := InstructionsDigest(old); d != nil {
		ch.Old = *d
	}
	if d := InstructionsDigest(new); d != nil {
		ch.New = *d
	}
	ch.Labels = labelInstructions(b, ch.Op, old, new)
	return ch, true
}

const (
	// maxRenderBytes is the largest definition (canonical bytes) or
	// instructions text RenderDiff shows in full; a larger one is
	// summarised by its digest. Real definitions are a few KiB; a bigger
	// one is noise or an attack on the reviewer's terminal.
	maxRenderBytes = 64 << 10
	// maxDiffLines caps the diff lines (hunk headers included) shown for
	// one change: enough for any honest edit, bounded for hostile ones.
	maxDiffLines = 400
	// diffContext is the number of unchanged lines around each hunk.
	diffContext = 3
	// maxLCSCells bounds the line-matching table (4 bytes a cell); beyond
	// it the differing middle is shown as removed, then added.
	maxLCSCells = 1 << 22
)

// RenderDiff writes a labelled diff of changes (as returned by Compare(old,
// new)) for a person at a terminal. For each change it writes a header
// line "<op> <kind singular> <name>", one "  label: <detail>" line per
// label, then a unified diff ("--- pinned/<name>", "+++ observed/<name>")
// of the two definitions pretty-printed as JSON (two-space indent, keys
// sorted), or of the instructions' lines. Invisible and unusual characters
// are escaped everywhere, names included (see VisibleText). Definitions
// larger than 64 KiB are summarised by digest, and each diff stops after
// 400 lines.
func RenderDiff(w io.Writer, old, new *Contract, changes []Change) error {
	ew := &errWriter{w: w}
	// Each side's definitions are found through an index built once: a
	// scan of the contract for every change made a diff of n changes cost
	// n² (red team: 2.25 s for 20,000, before the client got its block).
	oldDefs, newDefs := indexDefs(old), indexDefs(new)
	for i, ch := range changes {
		if i > 0 {
			ew.printf("\n")
		}
		renderChange(ew, old, new, oldDefs, newDefs, ch)
		if ew.err != nil {
			return ew.err
		}
	}
	return ew.err
}

// defKey names one definition of a contract.
type defKey struct {
	kind         Kind
	name, digest string
}

// indexDefs maps each definition of c to its canonical form.
func indexDefs(c *Contract) map[defKey][]byte {
	if c == nil {
		return nil
	}
	m := make(map[defKey][]byte, c.Len())
	for k, defs := range c.Defs {
		for _, d := range defs {
			m[defKey{k, d.Name, d.Digest}] = d.Canonical
		}
	}
	return m
}

func renderChange(ew *errWriter, old, new *Contract, oldDefs, newDefs map[defKey][]byte, ch Change) {
	name := visibleLine(ch.Name)
	if ch.Kind == ProtocolKind {
		renderProtocol(ew, ch)
		return
	}
	if ch.Kind == InstructionsKind {
		name = "instructions"
		ew.printf("%s instructions\n", visibleLine(string(ch.Op)))
	} else {
		ew.printf("%s %s %s\n", visibleLine(string(ch.Op)), visibleLine(ch.Kind.Singular()), name)
	}
	for _, l := range ch.Labels {
		d := l.Detail
		if d == "" {
			d = l.Code
		}
		ew.printf("  label: %s\n", visibleLine(d))
	}
	a, aok := renderSide(ew, old, oldDefs, ch, ch.Old, "pinned")
	b, bok := renderSide(ew, new, newDefs, ch, ch.New, "observed")
	if !aok || !bok {
		return
	}
	ew.printf("--- pinned/%s\n+++ observed/%s\n", name, name)
	shown := 0
	ops := lineDiff(a, b)
	for _, h := range hunks(ops) {
		lines := append([]string{h.header}, h.lines...)
		for _, line := range lines {
			if shown == maxDiffLines {
				ew.printf("  ... diff cut at %d lines\n", maxDiffLines)
				return
			}
			ew.printf("%s\n", line)
			shown++
		}
	}
}

// renderProtocol writes a protocol change: its labels and both versions.
func renderProtocol(ew *errWriter, ch Change) {
	ew.printf("%s protocol\n", visibleLine(string(ch.Op)))
	for _, l := range ch.Labels {
		d := l.Detail
		if d == "" {
			d = l.Code
		}
		ew.printf("  label: %s\n", visibleLine(d))
	}
	ew.printf("  pinned:   %s\n  observed: %s\n", visibleLine(shownVersion(ch.Old)), visibleLine(shownVersion(ch.New)))
}

// renderSide returns the lines of one side of a change: none when the side
// is absent. It reports false, after writing a summary line, when the side
// is too large to show or missing from the contract.
func renderSide(ew *errWriter, c *Contract, defs map[defKey][]byte, ch Change, digest, label string) ([]string, bool) {
	if digest == "" {
		return nil, true
	}
	var text []byte
	found := false
	if ch.Kind == InstructionsKind {
		if s := instructionsOf(c); s != nil && *InstructionsDigest(s) == digest {
			text, found = []byte(*s), true
		}
	} else {
		text, found = defs[defKey{ch.Kind, ch.Name, digest}]
	}
	switch {
	case !found:
		ew.printf("  %s: %s (not available)\n", label, visibleLine(digest))
		return nil, false
	case len(text) > maxRenderBytes:
		ew.printf("  %s: %s (%d bytes, too large to show)\n", label, visibleLine(digest), len(text))
		return nil, false
	case ch.Kind == InstructionsKind:
		lines := strings.Split(string(text), "\n")
		for i := range lines {
			lines[i] = VisibleText(lines[i])
		}
		return lines, true
	}
	lines, ok := prettyLines(text)
	if !ok {
		ew.printf("  %s: %s (%d bytes, too large to show pretty-printed)\n", label, visibleLine(digest), len(text))
		return nil, false
	}
	return lines, true
}

// maxPrettyBytes bounds a definition's pretty-printed form: indentation
// grows with depth, so 64 KiB nested 500 deep prints 32 MB.
const maxPrettyBytes = 1 << 20

// prettyLines pretty-prints a canonical definition (two-space indent, keys
// sorted, numbers as written) as visible lines.
func prettyLines(canonical []byte) ([]string, bool) {
	if prettySize(canonical) > maxPrettyBytes {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(canonical))
	d.UseNumber()
	var v any
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if d.Decode(&v) != nil || e.Encode(v) != nil {
		b.Reset()
		b.Write(canonical)
	}
	if b.Len() > maxPrettyBytes {
		return nil, false
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for i := range lines {
		lines[i] = VisibleText(lines[i])
	}
	return lines, true
}

// diffOp is one line of a line diff: ' ' kept, '-' removed, '+' added.
type diffOp struct {
	op   byte
	text string
}

// lineDiff returns a shortest-edit line diff of a and b: common prefix and
// suffix, and between them a longest common subsequence when the table
// fits in maxLCSCells (removals before additions where both are possible).
func lineDiff(a, b []string) []diffOp {
	var ops []diffOp
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		ops = append(ops, diffOp{' ', a[p]})
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	n, m := len(ma), len(mb)
	if n > 0 && m > 0 && (n+1)*(m+1) <= maxLCSCells {
		// Lines are compared as numbers, one per distinct line: comparing
		// the strings in the table's n·m cells read long equal lines to
		// their end every time (red team: 0.3 s for one change).
		ids := make(map[string]int32, n+m)
		number := func(ls []string) []int32 {
			out := make([]int32, len(ls))
			for i, l := range ls {
				v, ok := ids[l]
				if !ok {
					v = int32(len(ids))
					ids[l] = v
				}
				out[i] = v
			}
			return out
		}
		ia, ib := number(ma), number(mb)
		// lcs[i*(m+1)+j] is the length of the LCS of ma[i:] and mb[j:].
		lcs := make([]int32, (n+1)*(m+1))
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ia[i] == ib[j] {
					lcs[i*(m+1)+j] = lcs[(i+1)*(m+1)+j+1] + 1
				} else {
					lcs[i*(m+1)+j] = max(lcs[(i+1)*(m+1)+j], lcs[i*(m+1)+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n && j < m {
			switch {
			case ia[i] == ib[j]:
				ops = append(ops, diffOp{' ', ma[i]})
				i++
				j++
			case lcs[(i+1)*(m+1)+j] >= lcs[i*(m+1)+j+1]:
				ops = append(ops, diffOp{'-', ma[i]})
				i++
			default:
				ops = append(ops, diffOp{'+', mb[j]})
				j++
			}
		}
		ma, mb = ma[i:], mb[j:]
	}
	for _, l := range ma {
		ops = append(ops, diffOp{'-', l})
	}
	for _, l := range mb {
		ops = append(ops, diffOp{'+', l})
	}
	for _, l := range a[len(a)-s:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

// hunk is one "@@ -a,b +c,d @@" section of a unified diff.
type hunk struct {
	header string
	lines  []string
}

// hunks groups a line diff into unified-diff hunks with diffContext lines
// of context; changes closer than twice that share a hunk.
func hunks(ops []diffOp) []hunk {
	var out []hunk
	oldLine, newLine := make([]int, len(ops)+1), make([]int, len(ops)+1)
	for i, o := range ops {
		oldLine[i+1], newLine[i+1] = oldLine[i], newLine[i]
		if o.op != '+' {
			oldLine[i+1]++
		}
		if o.op != '-' {
			newLine[i+1]++
		}
	}
	for i := 0; i < len(ops); {
		if ops[i].op == ' ' {
			i++
			continue
		}
		start := max(0, i-diffContext)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].op != ' ' {
				end = j
			} else if j-end > 2*diffContext {
				break
			}
		}
		end = min(len(ops), end+diffContext+1)
		h := hunk{header: "@@ " + rangeOf('-', oldLine[start], oldLine[end]) + " " + rangeOf('+', newLine[start], newLine[end]) + " @@"}
		for _, o := range ops[start:end] {
			h.lines = append(h.lines, string(o.op)+o.text)
		}
		out = append(out, h)
		i = end
	}
	return out
}

// rangeOf writes a unified-diff range: lines from+1 to to, or "from,0"
// when empty.
func rangeOf(sign byte, from, to int) string {
	if to == from {
		return fmt.Sprintf("%c%d,0", sign, from)
	}
	return fmt.Sprintf("%c%d,%d", sign, from+1, to-from)
}

// errWriter keeps the first write error and writes nothing after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// prettySize is about the length of canonical pretty-printed with a
// two-space indent: each value after '[', '{' or ',' starts a line
// indented by its depth.
func prettySize(canonical []byte) int {
	n, depth, inString := len(canonical), 0, false
	for i := 0; i < len(canonical); i++ {
		c := canonical[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			n += 2*depth + 1
		case c == ']' || c == '}':
			depth--
			n += 2*depth + 1
		case c == ',':
			n += 2*depth + 1
		}
	}
	return n
}
