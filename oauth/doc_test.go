package oauth_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/oauth"
	"github.com/mcpseal/mcpseal/policy"
)

// TestTeamGatewayDocExamples: every auth.json and policy file in
// docs/gateway.md's "The team gateway" section is valid as printed.
func TestTeamGatewayDocExamples(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/gateway.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## The team gateway")
	if start < 0 {
		t.Fatal("docs/gateway.md has no team gateway section")
	}
	doc = doc[start:]
	if end := strings.Index(doc[1:], "\n## "); end > 0 {
		doc = doc[:end+1]
	}
	auths, policies := 0, 0
	for _, block := range strings.Split(doc, "```json\n")[1:] {
		block = block[:strings.Index(block, "```")]
		var top map[string]json.RawMessage
		if err := json.Unmarshal([]byte(block), &top); err != nil {
			t.Fatalf("a json block is not JSON: %v\n%s", err, block)
		}
		switch {
		case top["resource"] != nil:
			auths++
			if _, err := oauth.ParseConfig("docs/gateway.md", []byte(block)); err != nil {
				t.Errorf("auth.json example: %v", err)
			}
		case top["subjects"] != nil:
			policies++
			if _, err := policy.Parse("docs/gateway.md", []byte(block)); err != nil {
				t.Errorf("policy example: %v", err)
			}
		}
	}
	if auths < 2 || policies < 1 {
		t.Fatalf("found %d auth.json and %d policy examples; want at least 2 and 1", auths, policies)
	}
}
