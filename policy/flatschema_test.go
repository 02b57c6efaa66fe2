package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// flatSchemas are inputSchemas the shortcut must take: what echo-like
// tools and zod's JSON Schema output declare.
var flatSchemas = []string{
	`{"type":"object","properties":{"text":{"type":"string","description":"Text to repeat"}},"required":["text"]}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"tail":{"type":"boolean","default":false}},"required":["path"],"additionalProperties":false}`,
	`{"type":"object","properties":{"n":{"type":["number","null"]},"tags":{"type":"array"},"opts":{"type":"object"},"any":{"title":"Anything"}},"additionalProperties":true}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`,
	`{"type":"object","required":["x"],"additionalProperties":false}`,
	`{"type":"object"}`,
	`{}`,
	// From the red team: drafts, annotations with odd values, escaped and
	// case-variant names, a required name not declared.
	`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"a":{"type":"integer","default":"x"},"b":{"type":["string","null"]}},"required":["a"],"additionalProperties":false}`,
	`{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","properties":{"a":{"type":"number","deprecated":true},"\u00e9":{"type":"object"}},"required":["a","\u00e9"],"additionalProperties":false}`,
	`{"type":"object","properties":{"k":{"type":"array","readOnly":true},"K\u0301":{"type":"boolean"}},"required":["k","z"],"additionalProperties":true,"$comment":"x","examples":[{}]}`,
	`{"$schema":"http://json-schema.org/draft-06/schema#","properties":{"__proto__":{"type":"null"}},"additionalProperties":false}`,
	`{"properties":{"k":{"type":"string"}},"additionalProperties":false}`,
}

// notFlatSchemas assert more than the shortcut checks; they go the full
// path.
var notFlatSchemas = []string{
	`{"type":"object","properties":{"q":{"type":"string","minLength":1}}}`,
	`{"type":"object","properties":{"q":{"type":"string","format":"email"}}}`,
	`{"type":"object","properties":{"q":{"enum":["a","b"]}}}`,
	`{"type":"object","properties":{"q":{"$ref":"#/$defs/q"}},"$defs":{"q":{"type":"string"}}}`,
	`{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
	`{"type":"object","properties":{"q":true}}`,
	`{"type":"object","properties":{"q":{"type":"string","$schema":"http://json-schema.org/draft-07/schema#"}}}`,
	`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`,
	`{"type":"object","unevaluatedProperties":false}`,
	`{"type":["object","null"]}`,
	`{"type":"object","properties":{"o":{"type":"object","properties":{"a":{"type":"string"}}}}}`,
	`{"type":"object","allOf":[{"required":["a"]}]}`,
	`{"type":"object","$id":"urn:x"}`,
}

func TestFlatSchemaRecognised(t *testing.T) {
	t.Parallel()
	for _, s := range flatSchemas {
		if compileFlat([]byte(s)) == nil {
			t.Errorf("compileFlat(%s) = nil, want a shortcut", s)
		}
	}
	for _, s := range notFlatSchemas {
		if compileFlat([]byte(s)) != nil {
			t.Errorf("compileFlat(%s) took a schema that asserts more than it checks", s)
		}
	}
}

// shortcutParams attack the shortcut's reading: every way the full path
// refuses arguments that a type-by-first-byte reading could let through.
var shortcutParams = []string{
	`{"name":"t","arguments":{"text":"hello"}}`,
	`{"name":"t","arguments":{"text":"hello","text":"again"}}`,
	`{"name":"t","arguments":{"text":"hello","Text":"again"}}`,
	`{"name":"t","arguments":{"text":"\ud800"}}`,
	`{"name":"t","arguments":{"text":"caf\u00e9"}}`,
	"{\"name\":\"t\",\"arguments\":{\"text\":\"\xff\"}}",
	`{"name":"t","arguments":{"te\u0078t":"escaped name"}}`,
	`{"name":"t","arguments":{"text":5}}`,
	`{"name":"t","arguments":{"text":null}}`,
	`{"name":"t","arguments":{}}`,
	`{"name":"t"}`,
	`{"name":"t","arguments":null}`,
	`{"name":"t","arguments":[]}`,
	`{"name":"t","arguments":"text"}`,
	`{"name":"t","arguments":{"text":"a"},"arguments":{}}`,
	`{"name":"t","Arguments":{},"arguments":{"text":"a"}}`,
	`{"name":"t","Arguments":{"text":"a"}}`,
	`{"name":"t","arguments":{"text":"a"},"_meta":{"k":1,"k":2}}`,
	`{"name":"t","arguments":{"text":"a"},"_meta":{"k":1,"K":2}}`,
	`{"name":"t","arguments":{"text":"a"}} trailing`,
	`{"name":"t","arguments":{"text":"a"}}{}`,
	`{"name":"t","arguments":{"text":"a",}}`,
	`{"name":"t","arguments":{"text":"a"}`,
	`{"name":"t","arguments":{"text":"a","extra":1}}`,
	`{"name":"t","arguments":{"x":1}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts"}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts","limit":10}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts","limit":1.0}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts","limit":1e2}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts","limit":-0}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts","limit":123456789012345678901234567890}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts","limit":1e400}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts","limit":01}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts","limit":"10"}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts","tail":true}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts","tail":"true"}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts","tail":tru}}`,
	`{"name":"t","arguments":{"path":"/etc/hosts","Path":"/"}}`,
	`{"name":"t","arguments":{"n":null,"tags":[1,"a"],"opts":{"a":{"b":[]}},"any":[{}]}}`,
	`{"name":"t","arguments":{"n":1.5,"tags":{},"opts":[]}}`,
	`{"name":"t","arguments":{"opts":{"a":1,"a":2}}}`,
	`{"name":"t","arguments":{"opts":{"a":1,"A":2}}}`,
	`{"name":"t","arguments":{"id":7}}`,
	`{"name":"t","arguments":{"id":7.5}}`,
	`{"name":"t","arguments":{"x":{"deep":` + nested(40) + `}}}`,
	`{"name":"t","arguments":{"x":` + nested(200) + `}}`,
	` {"name":"t","arguments":{"text":"spaced"}} `,
	`{"arguments":{"a":1,"b":null}}`,
	`{"\u0061rguments":{"a":-0,"\u00e9":{"x":[1,{"y":"\ud83d\ude00"}]}},"_meta":{"progressToken":1}}`,
	` {"name":"t" , "arguments" : { "k" : [ ] , "z" : 1e5 } } `,
	`{"arguments":{"__proto__":null}}`,
	`{"arguments":{"a":12345678901234567890,"b":"\u212a"},"x":[[[[]]]]}`,
	`{"arguments":{"\u212a":"x"}}`,
	`{"arguments":{"k":"x","\u212a":"x"}}`,
	`[]`,
	`null`,
	``,
}

func nested(n int) string {
	s := "0"
	for range n {
		s = "[" + s + "]"
	}
	return s
}

// TestShortcutAcceptsNothingTheValidatorRefuses runs every schema against
// every attack params: CheckArguments with the shortcut must give what it
// gives without it, refusal for refusal, and the shortcut must take the
// valid calls it was built for (else this test would pass with it gone).
func TestShortcutAcceptsNothingTheValidatorRefuses(t *testing.T) {
	t.Parallel()
	took := 0
	for i, s := range append(flatSchemas, notFlatSchemas...) {
		def := toolRaw(t, fmt.Sprintf(`{"name":"t%d","inputSchema":%s}`, i, s))
		sch := NewSchemas(0)
		e := sch.get(def, false)
		if e.schema == nil {
			t.Fatalf("schema %s does not compile: %v", s, e.err)
		}
		for _, p := range shortcutParams {
			got := sch.CheckArguments(def, []byte(p))
			flat := e.flat
			e.flat = nil
			want := sch.CheckArguments(def, []byte(p))
			e.flat = flat
			// Which violation the validator names first can vary from run
			// to run (it walks a map); whether it refuses, and why, cannot.
			if (got == nil) != (want == nil) || got != nil && (got.Kind != want.Kind || got.Reason != want.Reason) {
				t.Errorf("schema %s, params %s: with the shortcut %+v, without %+v", s, p, got, want)
			}
			if flat != nil && flat.valid([]byte(p)) {
				took++
			}
		}
	}
	if took < 10 {
		t.Errorf("the shortcut took %d calls, want at least 10: it is not being used", took)
	}
}

func TestCheckArgumentsUsesTheShortcut(t *testing.T) {
	def := toolRaw(t, echoTool)
	sch := NewSchemas(0)
	if r := sch.CheckArguments(def, []byte(echoParams)); r != nil {
		t.Fatal(r)
	}
	if sch.get(def, false).flat == nil {
		t.Fatal("the echo tool's inputSchema has no shortcut")
	}
	params := []byte(echoParams)
	allocs := testing.AllocsPerRun(100, func() {
		if r := sch.CheckArguments(def, params); r != nil {
			t.Fatal(r)
		}
	})
	if allocs != 0 {
		t.Errorf("CheckArguments on the shortcut allocates %.0f times per call, want 0", allocs)
	}
}

// FuzzFlatSchemaAgrees holds the shortcut to its one claim: what it
// calls valid, decodeArguments and the compiled schema accept.
func FuzzFlatSchemaAgrees(f *testing.F) {
	for _, s := range flatSchemas {
		for _, p := range shortcutParams {
			f.Add([]byte(s), []byte(p))
		}
	}
	f.Fuzz(func(t *testing.T, schema, params []byte) {
		flat := compileFlat(schema)
		if flat == nil {
			return
		}
		compiled, err := compileSchema(schema, schemaKey{digest: "fuzz"})
		if err != nil || !flat.valid(params) {
			return
		}
		v, err := decodeArguments(params)
		if err != nil {
			t.Fatalf("shortcut took params %q that decodeArguments refuses: %v", params, err)
		}
		if _, ok := v.(map[string]any); !ok {
			t.Fatalf("shortcut took params %q whose arguments are not an object", params)
		}
		if err := compiled.Validate(v); err != nil {
			t.Fatalf("shortcut took params %q that schema %q refuses: %v", params, schema, err)
		}
	})
}

// TestShortcutAtTheRequiredLimit: a bit per required name, 64 at most; a
// schema with more is not flat, and each of the last names still counts.
func TestShortcutAtTheRequiredLimit(t *testing.T) {
	t.Parallel()
	var names, args, props []string
	for i := range maxFlatRequired + 1 {
		names = append(names, fmt.Sprintf(`"n%d"`, i))
		args = append(args, fmt.Sprintf(`"n%d":%d`, i, i))
		props = append(props, fmt.Sprintf(`"n%d":{"type":"integer"}`, i))
	}
	for _, k := range []int{maxFlatRequired - 1, maxFlatRequired, maxFlatRequired + 1} {
		for _, closed := range []string{"true", "false"} {
			schema := fmt.Sprintf(`{"type":"object","properties":{%s},"required":[%s],"additionalProperties":%s}`,
				strings.Join(props[:k], ","), strings.Join(names[:k], ","), closed)
			flat := compileFlat([]byte(schema))
			if (flat != nil) != (k <= maxFlatRequired) {
				t.Fatalf("%d required names: flat %v", k, flat != nil)
			}
			if flat == nil {
				continue
			}
			all := `{"arguments":{` + strings.Join(args[:k], ",") + `}}`
			if !flat.valid([]byte(all)) {
				t.Errorf("%d required names, all given: not taken", k)
			}
			for _, missing := range []int{0, k - 1} {
				given := slices.Delete(slices.Clone(args[:k]), missing, missing+1)
				if flat.valid([]byte(`{"arguments":{` + strings.Join(given, ",") + `}}`)) {
					t.Errorf("%d required names, n%d missing: taken", k, missing)
				}
			}
		}
	}
}

// echoSchema is the echo tool's inputSchema.
const echoSchema = `{"type":"object","properties":{"text":{"type":"string","description":"Text to repeat"}},"required":["text"]}`

// metaMemoCases are params pairs for the _meta memo: a first call that
// leaves a _meta remembered, and a second judged after it.
var metaMemoCases = []struct{ prior, params string }{
	{`{"_meta":{"a":1},"arguments":{"text":"x"}}`, `{"_meta":{"a":1},"arguments":{"text":"x"}}`},
	{`{"_meta":{"a":1},"arguments":{"text":"x"}}`, `{"_meta":{"a":1}x,"arguments":{"text":"x"}}`},
	{`{"_meta":{"a":1},"arguments":{"text":"x"}}`, `{"_meta":{"a":1},"_META":{},"arguments":{"text":"x"}}`},
	{`{"_meta":{"a":1},"arguments":{"text":"x"}}`, `{"_meta":{"a":1},"_meta":{"a":1},"arguments":{"text":"x"}}`},
	{`{"_meta":{"a":1},"arguments":{"text":"x"}}`, `{"_meta":{"a":1,"a":2},"arguments":{"text":"x"}}`},
	{`{"_meta":{"a":1},"arguments":{"text":"x"}}`, `{"_meta":{"a":1}`},
	{`{"_meta":{"a":1},"arguments":{"text":"x"}}`, `{"_meta":{"a":1},"arguments":{"text":1}}`},
	{`{"_meta":{"a":1,"A":2},"arguments":{"text":"x"}}`, `{"_meta":{"a":1,"A":2},"arguments":{"text":"x"}}`},
	{`{"_meta":{"a":"\ud800"},"arguments":{"text":"x"}}`, `{"_meta":{"a":"\ud800"},"arguments":{"text":"x"}}`},
	{`{"_meta":"s","arguments":{"text":"x"}}`, `{"_meta":"s","arguments":{"text":"x"}}`},
	{`{"_meta":{"k":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}},"arguments":{"text":"x"}}`, `{"_meta":{"k":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}} ,"arguments":{"text":"x"}}`},
	{`{"_meta":{},"arguments":{"text":"x"}}`, `{"_meta":{}}`},
}

// TestMetaMemoJudgesAsTheStrictPass: a shortcut that remembers a _meta
// judges every later params exactly as one that never saw a call.
func TestMetaMemoJudgesAsTheStrictPass(t *testing.T) {
	t.Parallel()
	for _, c := range metaMemoCases {
		fresh, memo := compileFlat([]byte(echoSchema)), compileFlat([]byte(echoSchema))
		memo.valid([]byte(c.prior))
		if got, want := memo.valid([]byte(c.params)), fresh.valid([]byte(c.params)); got != want {
			t.Errorf("after %s: valid(%s) = %v, without the memo %v", c.prior, c.params, got, want)
		}
	}
	// The memo is used: a remembered _meta is not read again.
	flat := compileFlat([]byte(echoSchema))
	params := []byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"text":"x"}}`)
	if !flat.valid(params) || flat.meta.Load() == nil || string(*flat.meta.Load()) != `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}` {
		t.Fatalf("the _meta of a valid call was not remembered")
	}
	// Nor is a _meta with two names equal up to case, or one past the bound.
	for _, p := range []string{`{"_meta":{"a":1,"A":1},"arguments":{"text":"x"}}`,
		`{"_meta":{"a":"` + strings.Repeat("x", maxMetaMemo) + `"},"arguments":{"text":"x"}}`} {
		flat := compileFlat([]byte(echoSchema))
		flat.valid([]byte(p))
		if flat.meta.Load() != nil {
			t.Errorf("remembered the _meta of %.60s", p)
		}
	}
}

// FuzzMetaMemoIsTheStrictPass: whatever _meta a first call left
// remembered, a second params gets the verdict it gets with none.
func FuzzMetaMemoIsTheStrictPass(f *testing.F) {
	for _, c := range metaMemoCases {
		f.Add([]byte(c.prior), []byte(c.params))
	}
	f.Fuzz(func(t *testing.T, prior, params []byte) {
		fresh, memo := compileFlat([]byte(echoSchema)), compileFlat([]byte(echoSchema))
		memo.valid(prior)
		if got, want := memo.valid(params), fresh.valid(params); got != want {
			t.Fatalf("after %q: valid(%q) = %v, without the memo %v", prior, params, got, want)
		}
	})
}
