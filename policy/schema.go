package policy

import (
	"bytes"
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/mcpseal/mcpseal/contract"
)

// This file enforces the pinned JSON Schemas: a tool's inputSchema on the
// arguments of every call, its outputSchema on the structuredContent of
// every result.
//
// Schemas are compiled by santhosh-tekuri/jsonschema/v6, which implements
// drafts 4, 6, 7, 2019-09 and 2020-12; the draft is chosen by "$schema"
// and is 2020-12 when there is none, as MCP specifies. The metaschemas of
// those drafts are compiled in. Every other "$ref" or "$schema" URL —
// https, http, file, anything — is refused without being opened, so a
// schema can neither make mcpseal fetch a URL nor read a local file; such
// a schema does not compile, and the tool cannot be called
// (schema-unusable) until its definition changes. Format assertions follow
// each draft's default (on for draft 7 and earlier). Patterns are Go
// regular expressions (RE2): linear time, no backtracking.

// DefaultSchemaCacheSize is how many compiled schemas a Schemas keeps:
// every input and output schema of several large servers.
const DefaultSchemaCacheSize = 4096

// Schemas compiles pinned schemas and keeps them, by definition digest,
// in a bounded least-recently-used cache. It is safe for concurrent use and
// meant to be shared by every session of a process.
type Schemas struct {
	mu    sync.Mutex
	size  int
	order *list.List // of *schemaEntry, most recently used first
	items map[schemaKey]*list.Element
}

type schemaKey struct {
	digest string
	output bool
}

type schemaEntry struct {
	key    schemaKey
	schema *jsonschema.Schema // nil when absent or unusable
	flat   *flatSchema        // an input schema's shortcut; nil when it has none
	absent bool               // the definition has no such schema
	err    error              // why the schema is unusable
}

// NewSchemas returns a cache of at most size compiled schemas (the
// default when size <= 0).
func NewSchemas(size int) *Schemas {
	if size <= 0 {
		size = DefaultSchemaCacheSize
	}
	return &Schemas{size: size, order: list.New(), items: map[schemaKey]*list.Element{}}
}

// Len returns how many schemas are cached.
func (s *Schemas) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}

func (s *Schemas) get(def contract.Definition, output bool) *schemaEntry {
	key := schemaKey{def.Digest, output}
	s.mu.Lock()
	if el, ok := s.items[key]; ok {
		s.order.MoveToFront(el)
		s.mu.Unlock()
		return el.Value.(*schemaEntry)
	}
	s.mu.Unlock()
	// Compile outside the lock: a large schema must not stall other
	// sessions. Two sessions may compile the same schema once each.
	e := compileEntry(def, key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.items[key]; ok {
		s.order.MoveToFront(el)
		return el.Value.(*schemaEntry)
	}
	s.items[key] = s.order.PushFront(e)
	for s.order.Len() > s.size {
		last := s.order.Back()
		s.order.Remove(last)
		delete(s.items, last.Value.(*schemaEntry).key)
	}
	return e
}

func compileEntry(def contract.Definition, key schemaKey) *schemaEntry {
	e := &schemaEntry{key: key}
	member := "inputSchema"
	if key.output {
		member = "outputSchema"
	}
	m, err := topMembers(def.Canonical, member)
	if err != nil {
		e.err = err
		return e
	}
	raw, ok := m[member]
	if !ok {
		e.absent = true
		return e
	}
	e.schema, e.err = compileSchema(raw, key)
	if e.schema != nil && !key.output {
		e.flat = compileFlat(raw)
	}
	return e
}

// refuseLoader is the compiler's only loader: it opens nothing.
type refuseLoader struct{}

var errRemoteRef = errors.New("remote and file references are not followed")

func (refuseLoader) Load(string) (any, error) { return nil, errRemoteRef }

// compileSchema compiles raw as the validator reads it. The flat-schema
// shortcut (flatschema.go) counts on every keyword in flatAnnotations
// asserting nothing: an option that turns one into an assertion here (a
// vocabulary, AssertContent, readOnly or writeOnly checks) must take it
// out of that list.
func compileSchema(raw json.RawMessage, key schemaKey) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	which := "input"
	if key.output {
		which = "output"
	}
	loc := fmt.Sprintf("urn:mcpseal:schema:%s:%s", key.digest, which)
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// CheckArguments validates the arguments of a tools/call against def's
// pinned inputSchema. params is the request's raw params member. It
// returns nil when the call may go on, else a KindSchema refusal. A
// definition without an inputSchema, or with one that does not compile
// offline, refuses every call (schema-unusable).
func (s *Schemas) CheckArguments(def contract.Definition, params []byte) *Refusal {
	tool := contract.SafeName(def.Name)
	e := s.get(def, false)
	if e.schema == nil {
		return &Refusal{Kind: KindSchema, Reason: ReasonSchemaUnusable, Tool: tool,
			Why: "mcpseal: the pinned inputSchema of tool " + tool + " cannot be used offline (missing, invalid, or it references a URL); the call was not forwarded"}
	}
	if e.flat != nil && e.flat.valid(params) {
		return nil
	}
	invalid := func(what string) *Refusal {
		return &Refusal{Kind: KindSchema, Reason: ReasonInvalidArguments, Tool: tool,
			Why: "mcpseal: the arguments of tool " + tool + " are " + what + "; the call was not forwarded"}
	}
	// One strict pass over the whole params: the case-fold check then
	// covers a case variant of "arguments" itself, at the top level. Only
	// the arguments are decoded into values.
	v, err := decodeArguments(params)
	switch {
	case errors.Is(err, errNotIJSON):
		return invalid("not valid I-JSON (repeated member names, invalid UTF-8 or a lone surrogate)")
	case errors.Is(err, errNotObject):
		return invalid("not in a params object")
	case err != nil:
		return invalid("ambiguous (member names that differ only in case)")
	}
	if _, isObject := v.(map[string]any); !isObject {
		return invalid("not a JSON object")
	}
	if err := e.schema.Validate(v); err != nil {
		r := violation(err, tool, ReasonInputSchema, KindSchema)
		r.Why = fmt.Sprintf("mcpseal: the arguments of tool %s violate its pinned inputSchema at %q (%s); the call was not forwarded", tool, r.Pointer, r.Keyword)
		return r
	}
	return nil
}

// CheckStructured validates a tools/call result against def's pinned
// outputSchema. result is the response's raw result member. When def has
// an outputSchema, the result must carry structuredContent that satisfies
// it (a result with "isError": true may leave it out, and a 2026-07-28
// "input_required" answer must carry no content at all); otherwise a
// KindWithheld refusal says the result must not reach the client.
func (s *Schemas) CheckStructured(def contract.Definition, result []byte) *Refusal {
	tool := contract.SafeName(def.Name)
	e := s.get(def, true)
	if e.absent {
		return nil
	}
	withheld := func(reason, what string) *Refusal {
		return &Refusal{Kind: KindWithheld, Reason: reason, Tool: tool,
			Why: "mcpseal: the result of tool " + tool + " was withheld: " + what}
	}
	if e.schema == nil {
		return withheld(ReasonSchemaUnusable, "its pinned outputSchema cannot be used offline")
	}
	if err := checkIJSON(result); err != nil {
		return withheld(ReasonInvalidResult, "it is not valid I-JSON")
	}
	m, err := topMembers(result, "structuredContent", "isError", "resultType", "content")
	if err != nil {
		return withheld(ReasonInvalidResult, "it is not one unambiguous JSON object")
	}
	if string(m["resultType"]) == `"input_required"` {
		// A 2026-07-28 multi round-trip answer asks the client for input;
		// the result comes on the retry, checked then. It may carry no
		// output of its own to go round the schema.
		if m["content"] != nil || m["structuredContent"] != nil {
			return withheld(ReasonInvalidResult, "an input_required answer carries content")
		}
		return nil
	}
	sc, ok := m["structuredContent"]
	if !ok {
		if string(m["isError"]) == "true" {
			return nil
		}
		r := withheld(ReasonOutputSchema, "it has no structuredContent although the tool declares an outputSchema")
		r.Keyword = "structuredContent"
		return r
	}
	v, err := decodeValue(sc)
	if err != nil {
		return withheld(ReasonInvalidResult, "its structuredContent is ambiguous (member names that differ only in case)")
	}
	if err := e.schema.Validate(v); err != nil {
		r := violation(err, tool, ReasonOutputSchema, KindWithheld)
		r.Why = fmt.Sprintf("mcpseal: the result of tool %s was withheld: its structuredContent violates the pinned outputSchema at %q (%s)", tool, r.Pointer, r.Keyword)
		return r
	}
	return nil
}

// firstCause is the cause a refusal names: the least by instance
// location, then by schema location and keyword. The validator gathers
// causes (and missing or unexpected members) by walking maps, so their
// order changes from run to run; the same call must get the same answer.
func firstCause(cs []*jsonschema.ValidationError) *jsonschema.ValidationError {
	best := cs[0]
	for _, c := range cs[1:] {
		k := slices.Compare(c.InstanceLocation, best.InstanceLocation)
		if k == 0 {
			k = strings.Compare(c.SchemaURL, best.SchemaURL)
		}
		if k == 0 {
			k = slices.Compare(c.ErrorKind.KeywordPath(), best.ErrorKind.KeywordPath())
		}
		if k < 0 {
			best = c
		}
	}
	return best
}

// violation turns a validation error into a refusal naming the first
// failing leaf (firstCause): its instance location as a safe JSON pointer
// and its keyword. For "required" the least missing member, and for
// "additionalProperties" the least unexpected one, is appended to the
// pointer, so the model can fix its call.
func violation(err error, tool, reason string, k Kind) *Refusal {
	r := &Refusal{Kind: k, Reason: reason, Tool: tool, Keyword: "schema"}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return r
	}
	leaf := ve
	for len(leaf.Causes) > 0 {
		leaf = firstCause(leaf.Causes)
	}
	loc := leaf.InstanceLocation
	switch ek := leaf.ErrorKind.(type) {
	case *kind.Required:
		if len(ek.Missing) > 0 {
			loc = append(loc[:len(loc):len(loc)], slices.Min(ek.Missing))
		}
	case *kind.AdditionalProperties:
		if len(ek.Properties) > 0 {
			loc = append(loc[:len(loc):len(loc)], slices.Min(ek.Properties))
		}
	}
	r.Pointer = SafePointer(loc)
	if kp := leaf.ErrorKind.KeywordPath(); len(kp) > 0 {
		r.Keyword = safeToken(kp[len(kp)-1])
	}
	return r
}
