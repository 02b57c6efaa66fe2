package contract_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/canon"
	"github.com/mcpseal/mcpseal/contract"
)

// digestVectorFile holds the language-neutral vectors of contract digest
// v1; see its "about" member and docs/contract-digest.md.
var digestVectorFile = filepath.Join("..", "testdata", "contract", "vectors.json")

type digestVectors struct {
	Definitions []struct {
		Name           string        `json:"name"`
		Kind           contract.Kind `json:"kind"`
		Input          string        `json:"input"`
		DefinitionName string        `json:"definitionName"`
		Canonical      string        `json:"canonical"`
		Digest         string        `json:"digest"`
	} `json:"definitions"`
	InvalidDefinitions []struct {
		Name     string        `json:"name"`
		Kind     contract.Kind `json:"kind"`
		Input    string        `json:"input"`
		InputHex string        `json:"inputHex"`
		Reason   string        `json:"reason"`
	} `json:"invalidDefinitions"`
	Sets []struct {
		Name        string        `json:"name"`
		Kind        contract.Kind `json:"kind"`
		Definitions []string      `json:"definitions"`
		Lines       []string      `json:"lines"`
		Digest      string        `json:"digest"`
	} `json:"sets"`
	Instructions []struct {
		Name         string  `json:"name"`
		Instructions *string `json:"instructions"`
		Digest       *string `json:"digest"`
	} `json:"instructions"`
	Contracts []struct {
		Name               string                   `json:"name"`
		Tools              []string                 `json:"tools"`
		Prompts            []string                 `json:"prompts"`
		Resources          []string                 `json:"resources"`
		ResourceTemplates  []string                 `json:"resourceTemplates"`
		Instructions       *string                  `json:"instructions"`
		Sets               map[contract.Kind]string `json:"sets"`
		InstructionsDigest *string                  `json:"instructionsDigest"`
		Text               string                   `json:"text"`
		Digest             string                   `json:"digest"`
	} `json:"contracts"`
}

func loadDigestVectors(t testing.TB) digestVectors {
	t.Helper()
	data, err := os.ReadFile(digestVectorFile)
	if err != nil {
		t.Fatal(err)
	}
	var v digestVectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", digestVectorFile, err)
	}
	if len(v.Definitions) == 0 || len(v.InvalidDefinitions) == 0 || len(v.Sets) == 0 || len(v.Instructions) == 0 || len(v.Contracts) == 0 {
		t.Fatalf("%s: a section has no vectors", digestVectorFile)
	}
	return v
}

func strs(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func TestDefinitionVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadDigestVectors(t).Definitions {
		d, err := contract.NewDefinition(v.Kind, []byte(v.Input))
		if err != nil {
			t.Errorf("%s: %v", v.Name, err)
			continue
		}
		if d.Kind != v.Kind || d.Name != v.DefinitionName || string(d.Canonical) != v.Canonical || d.Digest != v.Digest {
			t.Errorf("%s: got %s %q %s %s\nwant %s %q %s %s", v.Name, d.Kind, d.Name, d.Canonical, d.Digest,
				v.Kind, v.DefinitionName, v.Canonical, v.Digest)
		}
	}
}

// errorText is every DefinitionError message: no definition text, only the
// kind, a SafeName, a reason code and a canon offset and detail.
var errorText = regexp.MustCompile(`^contract: invalid (tool|prompt|resource|resource template) definition( "[A-Za-z0-9_.:/~-]+")?: (invalid-json|duplicate-key|not-object|no-name)( at offset \d+( \([a-zA-Z0-9 ',:\\\]}-]+\))?)?$`)

func TestInvalidDefinitionVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadDigestVectors(t).InvalidDefinitions {
		in := []byte(v.Input)
		if v.InputHex != "" {
			var err error
			if in, err = hex.DecodeString(v.InputHex); err != nil {
				t.Fatal(err)
			}
		}
		_, err := contract.NewDefinition(v.Kind, in)
		de, ok := err.(*contract.DefinitionError) // unwrapped: the gate relies on it
		if !ok {
			t.Errorf("%s: error %#v, want a *DefinitionError", v.Name, err)
			continue
		}
		if de.Kind != v.Kind || de.Reason != v.Reason {
			t.Errorf("%s: kind %s reason %s, want %s %s", v.Name, de.Kind, de.Reason, v.Kind, v.Reason)
		}
		if !errorText.MatchString(err.Error()) {
			t.Errorf("%s: unexpected message %q", v.Name, err)
		}
		if (v.Reason == contract.ReasonDuplicateKey) != errors.Is(err, canon.ErrDuplicateKey) {
			t.Errorf("%s: errors.Is(err, canon.ErrDuplicateKey) is wrong for %s", v.Name, v.Reason)
		}
		// One bad definition spoils the whole contract.
		_, err = contract.Parse(map[contract.Kind][][]byte{v.Kind: {[]byte(`{"name":"a","uri":"a","uriTemplate":"a"}`), in}}, nil)
		if pe, ok := err.(*contract.DefinitionError); !ok || pe.Reason != v.Reason {
			t.Errorf("%s: Parse error %v, want reason %s", v.Name, err, v.Reason)
		}
	}
}

func TestSetVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadDigestVectors(t).Sets {
		var defs []contract.Definition
		for _, raw := range v.Definitions {
			d, err := contract.NewDefinition(v.Kind, []byte(raw))
			if err != nil {
				t.Fatalf("%s: %v", v.Name, err)
			}
			defs = append(defs, d)
		}
		if got := contract.SetDigest(defs); got != v.Digest {
			t.Errorf("%s: SetDigest = %s, want %s", v.Name, got, v.Digest)
		}
		if got := sha256Hex(strings.Join(v.Lines, "\n")); got != v.Digest {
			t.Errorf("%s: vector's digest is not the SHA-256 of its lines", v.Name)
		}
		c, err := contract.Parse(map[contract.Kind][][]byte{v.Kind: strs(v.Definitions)}, nil)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		var lines []string
		for _, d := range c.Defs[v.Kind] {
			lines = append(lines, d.Name+":"+d.Digest)
		}
		if strings.Join(lines, "\n") != strings.Join(v.Lines, "\n") {
			t.Errorf("%s: contract order\n%s\nwant\n%s", v.Name, strings.Join(lines, "\n"), strings.Join(v.Lines, "\n"))
		}
		if got := c.Digests().Sets[v.Kind]; got != v.Digest {
			t.Errorf("%s: Digests().Sets = %s, want %s", v.Name, got, v.Digest)
		}
	}
}

func TestInstructionsVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadDigestVectors(t).Instructions {
		got := contract.InstructionsDigest(v.Instructions)
		if (got == nil) != (v.Digest == nil) || got != nil && *got != *v.Digest {
			t.Errorf("%s: InstructionsDigest = %v, want %v", v.Name, deref(got), deref(v.Digest))
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestContractVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadDigestVectors(t).Contracts {
		c, err := contract.Parse(map[contract.Kind][][]byte{
			contract.Tools:             strs(v.Tools),
			contract.Prompts:           strs(v.Prompts),
			contract.Resources:         strs(v.Resources),
			contract.ResourceTemplates: strs(v.ResourceTemplates),
		}, v.Instructions)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		d := c.Digests()
		if d.Contract != v.Digest {
			t.Errorf("%s: contract digest %s, want %s", v.Name, d.Contract, v.Digest)
		}
		if sha256Hex(v.Text) != v.Digest {
			t.Errorf("%s: vector's digest is not the SHA-256 of its text", v.Name)
		}
		if len(d.Sets) != len(contract.Kinds) {
			t.Errorf("%s: %d sets, want %d", v.Name, len(d.Sets), len(contract.Kinds))
		}
		for _, k := range contract.Kinds {
			if d.Sets[k] != v.Sets[k] {
				t.Errorf("%s: %s set %s, want %s", v.Name, k, d.Sets[k], v.Sets[k])
			}
		}
		if deref(d.Instructions) != deref(v.InstructionsDigest) {
			t.Errorf("%s: instructions %s, want %s", v.Name, deref(d.Instructions), deref(v.InstructionsDigest))
		}
		if want := len(v.Tools) + len(v.Prompts) + len(v.Resources) + len(v.ResourceTemplates); c.Len() != want {
			t.Errorf("%s: Len = %d, want %d", v.Name, c.Len(), want)
		}
	}
}

func sha256Hex(s string) string {
	d := contract.InstructionsDigest(&s)
	return *d
}

func TestNewCopiesAndSorts(t *testing.T) {
	t.Parallel()
	mk := func(k contract.Kind, raw string) contract.Definition {
		d, err := contract.NewDefinition(k, []byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	in := []contract.Definition{
		mk(contract.Tools, `{"name":"\uff61"}`),
		mk(contract.Tools, `{"name":"b"}`),
		mk(contract.Tools, `{"name":"\ud83d\ude00"}`),
		mk(contract.Tools, `{"name":"a","v":2}`),
		mk(contract.Tools, `{"name":"a","v":1}`),
	}
	orig := append([]contract.Definition{}, in...)
	instr := "be nice"
	c := contract.New(map[contract.Kind][]contract.Definition{contract.Tools: in}, &instr)
	instr = "changed"
	if *c.Instructions != "be nice" {
		t.Error("New kept a reference to the caller's instructions")
	}
	for i := range in {
		if in[i].Digest != orig[i].Digest {
			t.Fatal("New reordered the caller's slice")
		}
	}
	var names []string
	for _, d := range c.Defs[contract.Tools] {
		names = append(names, d.Name)
	}
	if got, want := strings.Join(names, " "), "a a b \U0001F600 \uff61"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if ds := c.Defs[contract.Tools]; ds[0].Digest > ds[1].Digest {
		t.Error("ties not ordered by digest")
	}
	for _, k := range contract.Kinds {
		if ds, ok := c.Defs[k]; !ok || ds == nil {
			t.Errorf("kind %s missing", k)
		}
	}
	for _, name := range []string{"a", "b", "\U0001F600", "\uff61"} {
		if d, ok := c.Lookup(contract.Tools, name); !ok || d.Name != name {
			t.Errorf("Lookup(%q) = %q, %v", name, d.Name, ok)
		}
	}
	if d, _ := c.Lookup(contract.Tools, "a"); d.Digest != c.Defs[contract.Tools][0].Digest {
		t.Error("Lookup of a shared name did not return the first")
	}
	for _, name := range []string{"", "c", "\U0001F601", "A"} {
		if _, ok := c.Lookup(contract.Tools, name); ok {
			t.Errorf("Lookup(%q) found something", name)
		}
	}
	if _, ok := c.Lookup(contract.Prompts, "a"); ok {
		t.Error("Lookup found a tool among prompts")
	}
	if c.Len() != 5 {
		t.Errorf("Len = %d", c.Len())
	}
	empty := contract.New(nil, nil)
	if empty.Len() != 0 || empty.Instructions != nil || len(empty.Defs) != len(contract.Kinds) {
		t.Errorf("New(nil, nil) = %+v", empty)
	}
}

func TestNewPanicsOnUnknownKind(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	contract.New(map[contract.Kind][]contract.Definition{"widgets": nil}, nil)
}

func TestParseRejectsUnknownKind(t *testing.T) {
	t.Parallel()
	if _, err := contract.Parse(map[contract.Kind][][]byte{"widgets": nil}, nil); err == nil {
		t.Error("no error")
	}
}

func TestSetDigestIgnoresOrder(t *testing.T) {
	t.Parallel()
	var defs []contract.Definition
	for i := range 50 {
		d, err := contract.NewDefinition(contract.Prompts, fmt.Appendf(nil, `{"name":"p%d","n":%d}`, i%7, i))
		if err != nil {
			t.Fatal(err)
		}
		defs = append(defs, d)
	}
	want := contract.SetDigest(defs)
	r := rand.New(rand.NewPCG(1, 1))
	for range 20 {
		r.Shuffle(len(defs), func(i, j int) { defs[i], defs[j] = defs[j], defs[i] })
		if got := contract.SetDigest(defs); got != want {
			t.Fatalf("SetDigest changed with order: %s != %s", got, want)
		}
	}
}

// TestDuplicateKeyErrorNamesTheDefinition: the error carries the name when
// it is unambiguous, and never the definition's text.
func TestDuplicateKeyErrorNamesTheDefinition(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		kind contract.Kind
		raw  string
		name string
		msg  string
	}{
		{contract.Tools, `{"name":"get_weather","description":"IGNORE","description":"PREVIOUS"}`, "get_weather",
			`contract: invalid tool definition "get_weather": duplicate-key at offset 45`},
		{contract.Tools, `{"name":"a","name":"b"}`, "", `contract: invalid tool definition: duplicate-key at offset 12`},
		{contract.Resources, `{"uri":"file:///x","a":{"b":1,"b":2}}`, "file:///x",
			`contract: invalid resource definition "file:///x": duplicate-key at offset 30`},
		{contract.Tools, `{"name":"evil\u202e\"; rm -rf","x":1,"x":2}`, "evil\u202e\"; rm -rf",
			`contract: invalid tool definition "evil____rm_-rf": duplicate-key at offset 37`},
		{contract.Prompts, `{"name":7,"x":1,"x":2}`, "", `contract: invalid prompt definition: duplicate-key at offset 16`},
	} {
		_, err := contract.NewDefinition(tt.kind, []byte(tt.raw))
		de, ok := err.(*contract.DefinitionError)
		if !ok || de.Name != tt.name || err.Error() != tt.msg {
			t.Errorf("NewDefinition(%s): %v (name %q); want %q (name %q)", tt.raw, err, de.Name, tt.msg, tt.name)
		}
		if strings.Contains(err.Error(), "IGNORE") || strings.Contains(err.Error(), "rm -rf") {
			t.Errorf("error echoes input: %v", err)
		}
	}
}

func TestCompareUTF16(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"a", "b", -1}, {"b", "a", 1}, {"a", "a", 0}, {"", "a", -1},
		{"\uff61", "\U0001F600", 1}, {"\U0001F600", "\uff61", -1},
		{"\ud7ff", "\U0001F600", -1},
	} {
		if got := contract.CompareUTF16(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareUTF16(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// FuzzNewDefinition: NewDefinition never panics, what it accepts has a
// canonical form that is a fixed point with the same name and digest
// whatever the member order, and what it refuses is a *DefinitionError
// with a stable reason.
func FuzzNewDefinition(f *testing.F) {
	v := loadDigestVectors(f)
	for _, d := range v.Definitions {
		f.Add(uint8(0), []byte(d.Input))
	}
	for _, d := range v.InvalidDefinitions {
		f.Add(uint8(1), []byte(d.Input))
	}
	for _, s := range v.Sets {
		for _, d := range s.Definitions {
			f.Add(uint8(2), []byte(d))
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, raw []byte) {
		k := contract.Kinds[int(kind)%len(contract.Kinds)]
		d, err := contract.NewDefinition(k, raw)
		if err != nil {
			de, ok := err.(*contract.DefinitionError)
			if !ok || de.Kind != k {
				t.Fatalf("error %#v is not a *DefinitionError of kind %s", err, k)
			}
			switch de.Reason {
			case contract.ReasonInvalidJSON, contract.ReasonDuplicateKey, contract.ReasonNotObject, contract.ReasonNoName:
			default:
				t.Fatalf("unknown reason %q", de.Reason)
			}
			if !errorText.MatchString(err.Error()) {
				t.Fatalf("unexpected message %q", err)
			}
			return
		}
		if d.Name == "" || d.Kind != k || len(d.Digest) != 64 {
			t.Fatalf("bad definition %+v", d)
		}
		again, err := contract.NewDefinition(k, d.Canonical)
		if err != nil || again.Digest != d.Digest || again.Name != d.Name || !bytes.Equal(again.Canonical, d.Canonical) {
			t.Fatalf("canonical form is not a fixed point: %+v, %v", again, err)
		}
		// Re-order the top-level members and add whitespace: same digest.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(d.Canonical, &m); err != nil {
			t.Fatalf("canonical form does not decode: %v", err)
		}
		var b bytes.Buffer
		b.WriteString("{ ")
		keys := make([]string, 0, len(m))
		for key := range m {
			keys = append(keys, key)
		}
		for i := len(keys) - 1; i >= 0; i-- { // map order, reversed
			if i < len(keys)-1 {
				b.WriteString(" ,\n")
			}
			kj, _ := json.Marshal(keys[i])
			b.Write(kj)
			b.WriteString(" : ")
			b.Write(m[keys[i]])
		}
		b.WriteString(" }")
		shuffled, err := contract.NewDefinition(k, b.Bytes())
		if err != nil || shuffled.Digest != d.Digest || shuffled.Name != d.Name {
			t.Fatalf("re-ordered members changed the digest: %s -> %+v, %v", d.Canonical, shuffled, err)
		}
	})
}

// BenchmarkParse10kTools builds a contract from a 10,000-tool listing of
// about 1 KB per tool: canonical form, digest and name of every definition,
// then every digest of the contract.
func BenchmarkParse10kTools(b *testing.B) {
	tools := make([][]byte, 10_000)
	var size int64
	for i := range tools {
		tools[i] = fmt.Appendf(nil, `{"name":"tool_%05d","title":"Tool %d","description":"%s","inputSchema":{"type":"object",`+
			`"properties":{"query":{"type":"string","description":"%s","minLength":1},"limit":{"type":"number","minimum":1,"maximum":100,"default":20},`+
			`"state":{"type":"string","enum":["open","closed","all"]}},"required":["query"],"additionalProperties":false},`+
			`"annotations":{"readOnlyHint":true,"openWorldHint":false},"_meta":{"com.example/rev":%d}}`,
			i, i, strings.Repeat("Search the issues of a repository. ", 14), strings.Repeat("words ", 20), i)
		size += int64(len(tools[i]))
	}
	raw := map[contract.Kind][][]byte{contract.Tools: tools}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		c, err := contract.Parse(raw, nil)
		if err != nil {
			b.Fatal(err)
		}
		_ = c.Digests()
	}
}
