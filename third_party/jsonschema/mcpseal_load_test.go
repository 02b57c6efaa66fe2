package jsonschema

import (
	"strings"
	"testing"
)

// mcpseal: a draft's metaschema is compiled when a schema of that draft is
// first compiled, and only then (see MCPSEAL.md), and it is enforced all
// the same. Run from mcpseal's module: go test github.com/santhosh-tekuri/jsonschema/v6
func TestDraftsLoadOnFirstUse(t *testing.T) {
	for _, d := range []*Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020} {
		if d.sch != nil {
			t.Fatalf("%s compiled before any schema was", d.url)
		}
	}
	compile := func(doc string) error {
		c := NewCompiler()
		v, err := UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource("urn:test", v); err != nil {
			return err
		}
		_, err = c.Compile("urn:test")
		return err
	}
	if err := compile(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"objekt"}`); err == nil {
		t.Fatal("a 2020-12 schema violating its metaschema compiled")
	}
	if Draft2020.sch == nil || len(Draft2020.vocabSchemas) != len(Draft2020.allVocabs) {
		t.Fatal("2020-12 metaschema not compiled by its first use")
	}
	if Draft4.sch != nil || Draft7.sch != nil || Draft2019.sch != nil {
		t.Fatal("another draft's metaschema was compiled")
	}
	if err := compile(`{"$schema":"http://json-schema.org/draft-04/schema#","type":["object","object"]}`); err == nil {
		t.Fatal("a draft-04 schema violating its metaschema compiled")
	}
	if err := compile(`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`); err != nil {
		t.Fatalf("a valid draft-04 schema: %v", err)
	}
	if Draft4.sch == nil {
		t.Fatal("draft-04 metaschema not compiled by its first use")
	}
}
