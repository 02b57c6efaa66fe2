package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Change labels are fixed-rule findings about one change, computed from the
// two versions of a definition (or of the instructions) without a model.
// They describe; they never unblock anything. A label's Code is stable
// kebab-case and safe to show a model; its Detail is for the terminal and
// may quote server text, always passed through visibleLine.
//
// Definition-level codes:
//
//	new-tool, new-prompt, new-resource, new-resource-template   the definition was added
//	removed                                                     the definition was removed
//	instructions-changed                                        the instructions were added, removed or changed
//
// Codes from the text rules, applied to text that is new in the new
// version (see instructionRules in safename.go):
//
//	new-instruction      imperative wording aimed at the model
//	mentions-secrets     secrets, private files, or conversation contents
//	new-link             a URL, email address, IP address or domain not in the old version
//	hidden-characters    invisible characters or a long base64-like run not in the old version
//
// Codes from comparing members (changed definitions only):
//
//	permission-hint-changed   readOnlyHint, destructiveHint, idempotentHint or openWorldHint
//	new-field                 a new input property or prompt argument, at any depth
//	field-removed             an input property or prompt argument was removed
//	type-changed              a property's JSON Schema type changed
//	required-expanded         a property or argument became required
//	enum-changed              an enum's values changed
//	constraint-loosened       a constraint was removed or widened, or changed in an unknown direction
//	constraint-narrowed       a constraint was added or tightened
//	output-schema-added       a tool gained an outputSchema
//	output-schema-changed     a tool's outputSchema changed or was removed
//	metadata-changed          any other member (title, icons, _meta, execution, other annotations, unknown members)
//	wording-only              the definition changed and no other rule fired
//	not-analysed              the change came after Compare's label budget (maxLabelledBytes): no rule read it
//
// Codes of the protocol pseudo-kind (ProtocolKind, see protocol.go; listed
// in ProtocolCodes, not LabelCodes):
//
//	protocol-downgraded   an older protocol version, or a refused server/discover after 2026-07-28
//	protocol-changed      any other change of the protocol version
const (
	CodeNewTool             = "new-tool"
	CodeNewPrompt           = "new-prompt"
	CodeNewResource         = "new-resource"
	CodeNewResourceTemplate = "new-resource-template"
	CodeRemoved             = "removed"
	CodeInstructionsChanged = "instructions-changed"
	CodeNewInstruction      = "new-instruction"
	CodeMentionsSecrets     = "mentions-secrets"
	CodeNewLink             = "new-link"
	CodeHiddenCharacters    = "hidden-characters"
	CodePermissionHint      = "permission-hint-changed"
	CodeNewField            = "new-field"
	CodeFieldRemoved        = "field-removed"
	CodeTypeChanged         = "type-changed"
	CodeRequiredExpanded    = "required-expanded"
	CodeEnumChanged         = "enum-changed"
	CodeConstraintLoosened  = "constraint-loosened"
	CodeConstraintNarrowed  = "constraint-narrowed"
	CodeOutputSchemaAdded   = "output-schema-added"
	CodeOutputSchemaChanged = "output-schema-changed"
	CodeMetadataChanged     = "metadata-changed"
	CodeWordingOnly         = "wording-only"
	CodeNotAnalysed         = "not-analysed"
)

// LabelCodes lists every label code in the order labels are reported.
var LabelCodes = []string{
	CodeNewTool, CodeNewPrompt, CodeNewResource, CodeNewResourceTemplate,
	CodeRemoved, CodeInstructionsChanged,
	CodeNewInstruction, CodeMentionsSecrets, CodeNewLink, CodeHiddenCharacters,
	CodePermissionHint,
	CodeNewField, CodeFieldRemoved, CodeTypeChanged, CodeRequiredExpanded,
	CodeEnumChanged, CodeConstraintLoosened, CodeConstraintNarrowed,
	CodeOutputSchemaAdded, CodeOutputSchemaChanged,
	CodeMetadataChanged, CodeWordingOnly, CodeNotAnalysed,
}

// Label is one fixed-rule finding about a change. Code is stable kebab-case
// and safe to show a model; Detail is for the terminal only (it may contain
// server text, with invisible characters escaped).
type Label struct {
	Code   string `json:"code"`
	Detail string `json:"detail,omitempty"`
}

const (
	// maxLabelsPerCode bounds the labels of one code on one change (a
	// definition with thousands of new properties yields one label per
	// property); the last kept label says how many were left out.
	maxLabelsPerCode = 16
	// maxDetailQuote is the longest piece of server text quoted in a
	// label detail, in runes.
	maxDetailQuote = 60
)

var codeRank = func() map[string]int {
	m := make(map[string]int, len(LabelCodes))
	for i, c := range LabelCodes {
		m[c] = i
	}
	return m
}()

// newCode returns the label code for an added definition of kind k.
func newCode(k Kind) string {
	switch k {
	case Prompts:
		return CodeNewPrompt
	case Resources:
		return CodeNewResource
	case ResourceTemplates:
		return CodeNewResourceTemplate
	}
	return CodeNewTool
}

// permissionHints are the tool annotations that tell a client how careful
// to be; a flip gets its own label.
var permissionHints = []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

// labeler accumulates the labels of one change.
type labeler struct {
	labels []Label
	// propsSeg joins a schema's member path to a property name: ".properties."
	// in JSON Schema, "." for prompt arguments.
	propsSeg string
}

func (l *labeler) add(code, format string, args ...any) {
	l.labels = append(l.labels, Label{Code: code, Detail: fmt.Sprintf(format, args...)})
}

// finish sorts the labels by code (stable), drops duplicates and bounds the
// labels of each code.
func (l *labeler) finish() []Label {
	sort.SliceStable(l.labels, func(i, j int) bool {
		return codeRank[l.labels[i].Code] < codeRank[l.labels[j].Code]
	})
	out := make([]Label, 0, len(l.labels))
	seen := make(map[Label]bool)
	count := make(map[string]int)
	dropped := make(map[string]int)
	for _, lb := range l.labels {
		if seen[lb] {
			continue
		}
		seen[lb] = true
		if count[lb.Code] == maxLabelsPerCode {
			dropped[lb.Code]++
			continue
		}
		count[lb.Code]++
		out = append(out, lb)
	}
	for i := len(out) - 1; i >= 0; i-- {
		if n := dropped[out[i].Code]; n > 0 {
			out[i].Detail += fmt.Sprintf(" (and %d more)", n)
			dropped[out[i].Code] = 0
		}
	}
	return out
}

// maxLabelledBytes bounds the bytes one Compare puts through the rules:
// the text rules' regular expressions read 0.5–2 MB a second, so without
// it a server that changes a large pinned contract (found by the red team:
// 100 definitions of 150 KB, each with five bytes more) held its gate for
// 24 s before the verdict, and a 256 MiB one would for minutes. A change
// past the budget is labelled not-analysed (and, when added, new-tool and
// the like), never wording-only; the verdict does not wait on labels,
// which never unblock anything. 256 KiB is a hundred ordinary changed
// definitions or more.
const maxLabelledBytes = 256 << 10

// labelBudget is what one Compare may still put through the rules.
type labelBudget struct{ left int }

func newLabelBudget() *labelBudget { return &labelBudget{left: maxLabelledBytes} }

// take reports whether n more bytes fit the budget, spending them if so.
// A change that does not fit spends nothing: a later, smaller one may.
func (b *labelBudget) take(n int) bool {
	if n > b.left {
		return false
	}
	b.left -= n
	return true
}

// notAnalysed labels a change past the budget.
func (l *labeler) notAnalysed() {
	l.add(CodeNotAnalysed, "Not analysed (over the %d KiB the rules read in one comparison): review it by hand", maxLabelledBytes>>10)
}

// labelDefinitionWithin is labelDefinition within b: past it a changed or
// added definition is labelled without reading its text.
func labelDefinitionWithin(b *labelBudget, kind Kind, op Op, oldRaw, newRaw []byte) []Label {
	if op == OpRemoved || b.take(len(oldRaw)+len(newRaw)) {
		return labelDefinition(kind, op, oldRaw, newRaw)
	}
	l := &labeler{}
	if op == OpAdded {
		l.add(newCode(kind), "New %s", kind.Singular())
	}
	l.notAnalysed()
	return l.finish()
}

// labelDefinition returns the labels of one definition change. oldRaw and
// newRaw are the canonical forms (nil when absent).
func labelDefinition(kind Kind, op Op, oldRaw, newRaw []byte) []Label {
	l := &labeler{propsSeg: ".properties."}
	switch op {
	case OpAdded:
		l.add(newCode(kind), "New %s", kind.Singular())
	case OpRemoved:
		l.add(CodeRemoved, "Removed %s", kind.Singular())
		return l.finish()
	}
	oldV, newV := decodeObject(oldRaw), decodeObject(newRaw)
	if op == OpChanged {
		l.compareMembers(kind, oldV, newV)
	}
	l.textRules(collectText(kind, oldV), collectText(kind, newV))
	if op == OpChanged && len(l.labels) == 0 {
		l.add(CodeWordingOnly, "Wording only")
	}
	return l.finish()
}

// labelInstructions returns the labels of a change to the instructions,
// within b (see labelDefinitionWithin).
func labelInstructions(b *labelBudget, op Op, oldText, newText *string) []Label {
	l := &labeler{}
	switch op {
	case OpAdded:
		l.add(CodeInstructionsChanged, "Instructions added")
	case OpRemoved:
		l.add(CodeInstructionsChanged, "Instructions removed")
		return l.finish()
	default:
		l.add(CodeInstructionsChanged, "Instructions changed")
	}
	n := 0
	for _, p := range []*string{oldText, newText} {
		if p != nil {
			n += len(*p)
		}
	}
	if !b.take(n) {
		l.notAnalysed()
		return l.finish()
	}
	l.textRules(instructionsText(oldText), instructionsText(newText))
	return l.finish()
}

// decodeObject decodes a canonical definition for analysis. Numbers stay
// json.Number so that nothing is lost; a definition that is absent (or, which
// a Contract never holds, not an object) decodes as nil.
func decodeObject(raw []byte) map[string]any {
	if raw == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil {
		return nil
	}
	return m
}

// compareMembers labels the differences between two versions of a
// definition member by member.
func (l *labeler) compareMembers(kind Kind, o, n map[string]any) {
	for _, k := range unionKeys(o, n) {
		ov, oin := o[k]
		nv, nin := n[k]
		if oin == nin && reflect.DeepEqual(ov, nv) {
			continue
		}
		switch {
		case k == kind.NameMember(), k == "description":
			// The name is the identity; descriptions are wording, judged by
			// the text rules.
		case kind == Tools && k == "inputSchema":
			l.compareSchema("", "inputSchema", ov, nv, oin, nin)
		case kind == Tools && k == "outputSchema":
			switch {
			case !oin:
				l.add(CodeOutputSchemaAdded, "Output schema added")
			case !nin:
				l.add(CodeOutputSchemaChanged, "Output schema removed")
			default:
				l.add(CodeOutputSchemaChanged, "Output schema changed")
			}
		case kind == Prompts && k == "arguments":
			os, ok1 := promptSchema(ov, oin)
			ns, ok2 := promptSchema(nv, nin)
			if !ok1 || !ok2 {
				l.metadata("arguments")
				break
			}
			pl := &labeler{propsSeg: "."}
			pl.compareSchema("", "arguments", os, ns, true, true)
			l.labels = append(l.labels, pl.labels...)
		case k == "annotations":
			l.compareAnnotations(ov, nv, oin, nin)
		default:
			l.metadata(k)
		}
	}
}

func (l *labeler) metadata(member string) {
	l.add(CodeMetadataChanged, "Metadata changed: %s", quote(member))
}

// compareAnnotations labels permission hint flips and, as metadata, every
// other annotation that changed.
func (l *labeler) compareAnnotations(ov, nv any, oin, nin bool) {
	om, oObj := ov.(map[string]any)
	nm, nObj := nv.(map[string]any)
	if (oin && !oObj) || (nin && !nObj) {
		l.metadata("annotations")
	}
	for _, k := range unionKeys(om, nm) {
		a, aok := om[k]
		b, bok := nm[k]
		if aok == bok && reflect.DeepEqual(a, b) {
			continue
		}
		if slices.Contains(permissionHints, k) {
			l.add(CodePermissionHint, "Permission hint changed: %s %s to %s", k, showValue(a, aok), showValue(b, bok))
		} else {
			l.metadata("annotations." + k)
		}
	}
}

// promptSchema turns a prompt's arguments array into an object schema with
// one property per argument (its members other than name and required) and
// the required arguments in "required", so that prompts get the same field
// labels as tools. It fails when the array is not a list of objects with
// distinct string names.
func promptSchema(v any, present bool) (map[string]any, bool) {
	props := map[string]any{}
	required := []any{}
	if present {
		args, ok := v.([]any)
		if !ok {
			return nil, false
		}
		for _, a := range args {
			am, ok := a.(map[string]any)
			if !ok {
				return nil, false
			}
			name, ok := am["name"].(string)
			if _, dup := props[name]; !ok || dup {
				return nil, false
			}
			p := make(map[string]any, len(am))
			for k, x := range am {
				if k != "name" && k != "required" {
					p[k] = x
				}
			}
			props[name] = p
			if am["required"] == true {
				required = append(required, name)
			}
		}
	}
	return map[string]any{"properties": props, "required": required}, true
}

// compareSchema labels the differences between two JSON Schemas. field is
// the dotted field path shown in details ("" at the root), member the
// member path used for metadata details; oin and nin say whether each side
// is present (an absent schema accepts everything, like true).
func (l *labeler) compareSchema(field, member string, o, n any, oin, nin bool) {
	// Every path is cut on the way in, so that no path a schema's keywords
	// extend is longer than what a detail quotes ($defs keys, items and
	// alternatives add to them; red team: 426 MiB for one comparison).
	field, member = capPath(field), capPath(member)
	om, oObj := o.(map[string]any)
	nm, nObj := n.(map[string]any)
	// An absent schema accepts everything, like {}: compare against that so
	// that a schema's first properties still show as new fields.
	if !oin && nObj {
		om, oObj = map[string]any{}, true
	}
	if !nin && oObj {
		nm, nObj = map[string]any{}, true
	}
	if !oObj || !nObj {
		l.schemaLevel(field, "schema", o, n, oin, nin)
		return
	}
	for _, k := range unionKeys(om, nm) {
		ov, a := om[k]
		nv, b := nm[k]
		if a == b && reflect.DeepEqual(ov, nv) {
			continue
		}
		l.compareKeyword(field, member, k, ov, nv, a, b)
	}
}

// Schema keywords by how a change to them is judged.
var (
	// upperBounds widen when they grow; lowerBounds widen when they shrink.
	upperBounds = []string{"maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties", "maxContains"}
	lowerBounds = []string{"minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties", "minContains"}
	// schemaValued keywords hold a subschema: absent or true accepts
	// everything, an object schema some things, false nothing.
	schemaValued = []string{"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems", "propertyNames", "contains", "not", "if", "then", "else"}
	// opaqueConstraints have no direction we can judge: adding one narrows,
	// removing one loosens, and changing one is reported as loosened (the
	// direction a reviewer has to rule out).
	opaqueConstraints = []string{"pattern", "format", "const", "multipleOf", "contentEncoding", "contentMediaType", "contentSchema", "dependentRequired", "dependencies", "dependentSchemas", "patternProperties", "prefixItems", "$ref", "$dynamicRef", "$recursiveRef"}
)

func (l *labeler) compareKeyword(field, member, k string, ov, nv any, oin, nin bool) {
	switch {
	case k == "description" || k == "title":
		// Wording, judged by the text rules.
	case k == "type":
		l.add(CodeTypeChanged, "Type changed: %s %s to %s", fieldName(field), typeString(ov, oin), typeString(nv, nin))
	case k == "properties":
		op, ok1 := ov.(map[string]any)
		np, ok2 := nv.(map[string]any)
		if (oin && !ok1) || (nin && !ok2) {
			l.metadata(capPath(member + "." + k))
			return
		}
		for _, p := range unionKeys(op, np) {
			a, aok := op[p]
			b, bok := np[p]
			switch {
			case !aok:
				l.add(CodeNewField, "New field: %s", quote(joinField(field, p)))
			case !bok:
				l.add(CodeFieldRemoved, "Field removed: %s", quote(joinField(field, p)))
			default:
				l.compareSchema(joinField(field, p), capPath(member+l.propsSeg+p), a, b, true, true)
			}
		}
	case k == "required":
		l.compareRequired(field, member, ov, nv, oin, nin)
	case k == "enum":
		l.add(CodeEnumChanged, "Enum changed: %s %s", fieldName(field), enumDelta(ov, nv))
	case k == "items":
		if _, ok := ov.(map[string]any); ok {
			if _, ok := nv.(map[string]any); ok {
				l.compareSchema(field+"[]", member+".items", ov, nv, true, true)
				return
			}
		}
		l.schemaLevel(field, k, ov, nv, oin, nin)
	case k == "anyOf" || k == "oneOf" || k == "allOf":
		a, ok1 := ov.([]any)
		b, ok2 := nv.([]any)
		switch {
		case ok1 && ok2 && len(a) == len(b):
			for i := range a {
				l.compareSchema(field, fmt.Sprintf("%s.%s[%d]", member, k, i), a[i], b[i], true, true)
			}
		case ok1 && ok2:
			// More alternatives accept more; more conjuncts accept less.
			l.constraint((len(b) > len(a)) == (k != "allOf"), field, k, ov, nv, oin, nin)
		default:
			l.constraint(oin, field, k, ov, nv, oin, nin)
		}
	case k == "$defs" || k == "definitions":
		a, ok1 := ov.(map[string]any)
		b, ok2 := nv.(map[string]any)
		if !ok1 || !ok2 {
			l.metadata(capPath(member + "." + k))
			return
		}
		for _, d := range unionKeys(a, b) {
			x, xok := a[d]
			y, yok := b[d]
			if xok && yok {
				l.compareSchema(k+"."+d, member+"."+k+"."+d, x, y, true, true)
			} else {
				l.metadata(capPath(member + "." + k + "." + d))
			}
		}
	case k == "uniqueItems":
		if (ov == true) == (nv == true) {
			l.metadata(capPath(member + "." + k))
			return
		}
		l.constraint(ov == true, field, k, ov, nv, oin, nin)
	case slices.Contains(upperBounds, k), slices.Contains(lowerBounds, k):
		l.bound(field, k, ov, nv, oin, nin, slices.Contains(upperBounds, k))
	case slices.Contains(schemaValued, k):
		l.schemaLevel(field, k, ov, nv, oin, nin)
	case slices.Contains(opaqueConstraints, k):
		l.constraint(oin, field, k, ov, nv, oin, nin)
	default:
		l.metadata(capPath(member + "." + k))
	}
}

// compareRequired labels entries that became required and entries that no
// longer are.
func (l *labeler) compareRequired(field, member string, ov, nv any, oin, nin bool) {
	a, ok1 := stringSet(ov)
	b, ok2 := stringSet(nv)
	if (oin && !ok1) || (nin && !ok2) {
		l.constraint(true, field, "required", ov, nv, oin, nin)
		return
	}
	for _, s := range sortedKeys(b) {
		if !a[s] {
			l.add(CodeRequiredExpanded, "Required expanded: %s", quote(joinField(field, s)))
		}
	}
	for _, s := range sortedKeys(a) {
		if !b[s] {
			l.add(CodeConstraintLoosened, "Constraint loosened: %s no longer required", quote(joinField(field, s)))
		}
	}
}

// bound judges a numeric bound; draft-04 boolean exclusiveMaximum and
// exclusiveMinimum narrow when true.
func (l *labeler) bound(field, k string, ov, nv any, oin, nin, upper bool) {
	if !oin || !nin {
		l.constraint(oin, field, k, ov, nv, oin, nin)
		return
	}
	if ob, ok := ov.(bool); ok {
		if nb, ok := nv.(bool); ok {
			l.constraint(ob && !nb, field, k, ov, nv, oin, nin)
			return
		}
	}
	a, ok1 := toFloat(ov)
	b, ok2 := toFloat(nv)
	switch {
	case !ok1 || !ok2:
		l.constraint(true, field, k, ov, nv, oin, nin)
	case a != b:
		l.constraint((b > a) == upper, field, k, ov, nv, oin, nin)
	}
}

// schemaLevel judges a keyword whose value is a subschema (or a whole
// schema) that changed shape: true or absent accepts everything, an object
// schema some things, false nothing. Two different object schemas here, or
// anything else, count as loosened.
func (l *labeler) schemaLevel(field, k string, ov, nv any, oin, nin bool) {
	level := func(v any, in bool) int {
		switch v.(type) {
		case map[string]any:
			return 1
		case bool:
			if v == true {
				return 2
			}
			return 0
		}
		if !in {
			return 2
		}
		return -1
	}
	a, b := level(ov, oin), level(nv, nin)
	if k == "not" {
		a, b = 2-a, 2-b
	}
	if a == b || a < 0 || b < 0 {
		l.constraint(true, field, k, ov, nv, oin, nin)
		return
	}
	l.constraint(b > a, field, k, ov, nv, oin, nin)
}

func (l *labeler) constraint(loosened bool, field, k string, ov, nv any, oin, nin bool) {
	code, word := CodeConstraintNarrowed, "narrowed"
	if loosened {
		code, word = CodeConstraintLoosened, "loosened"
	}
	l.add(code, "Constraint %s: %s %s %s to %s", word, fieldName(field), k, showValue(ov, oin), showValue(nv, nin))
}

// fieldName shows a field path in a detail; the root is "(root)".
func fieldName(field string) string {
	if field == "" {
		return "(root)"
	}
	return quote(field)
}

func joinField(field, name string) string {
	if field == "" {
		return capPath(name)
	}
	return capPath(field + "." + name)
}

// maxPathBytes bounds a member path kept for a detail: quote shows at most
// maxDetailQuote runes of it, and a rune is at most 4 bytes. Paths are built
// for every key and element, so an uncapped one costs len(parent) each.
const maxPathBytes = 4*maxDetailQuote + 4

func capPath(p string) string {
	if len(p) <= maxPathBytes {
		return p
	}
	i := maxPathBytes
	for i > 0 && !utf8.RuneStart(p[i]) {
		i-- // not inside a character
	}
	return p[:i]
}

// typeString shows a type keyword: "string", "integer|null", or "unset".
func typeString(v any, in bool) string {
	if !in {
		return "unset"
	}
	switch t := v.(type) {
	case string:
		return quote(t)
	case []any:
		parts := make([]string, 0, len(t))
		for _, x := range t {
			if s, ok := x.(string); ok {
				parts = append(parts, s)
			} else {
				parts = append(parts, showValue(x, true))
			}
		}
		sort.Strings(parts)
		return quote(strings.Join(parts, "|"))
	}
	return showValue(v, true)
}

// enumDelta summarises what changed between two enum keywords.
func enumDelta(ov, nv any) string {
	a, _ := ov.([]any)
	b, _ := nv.([]any)
	var added, removed []string
	has := func(list []any, x any) bool {
		return slices.ContainsFunc(list, func(y any) bool { return reflect.DeepEqual(x, y) })
	}
	for _, x := range b {
		if !has(a, x) {
			added = append(added, showValue(x, true))
		}
	}
	for _, x := range a {
		if !has(b, x) {
			removed = append(removed, showValue(x, true))
		}
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "added "+listSome(added))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed "+listSome(removed))
	}
	if len(parts) == 0 {
		return "reordered or reshaped"
	}
	return strings.Join(parts, "; ")
}

// listSome joins up to four items, saying how many more there were.
func listSome(items []string) string {
	const most = 4
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:most], ", "), len(items)-most)
}

// showValue shows a JSON value compactly for a detail; "unset" when absent.
func showValue(v any, in bool) string {
	if !in {
		return "unset"
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(v) != nil {
		return "?"
	}
	return quote(strings.TrimSuffix(b.String(), "\n"))
}

// quote makes server text safe for a one-line detail: invisible characters
// escaped and the text cut to maxDetailQuote runes.
func quote(s string) string {
	if utf8.RuneCountInString(s) > maxDetailQuote {
		s = string([]rune(s)[:maxDetailQuote]) + "…"
	}
	return visibleLine(s)
}

func toFloat(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func stringSet(v any) (map[string]bool, bool) {
	m := map[string]bool{}
	if v == nil {
		return m, true
	}
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		m[s] = true
	}
	return m, true
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func sortedKeys[V any](m map[string]V) []string {
	return unionKeys(m, nil)
}
