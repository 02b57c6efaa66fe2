package policy

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/canon"
	"github.com/mcpseal/mcpseal/contract"
)

// mustParse parses a policy written in a test.
func mustParse(t testing.TB, text string) *Policy {
	t.Helper()
	p, err := Parse("policy.json", []byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

// documentedExample returns the first json block of docs/policy.md.
func documentedExample(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile("../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "## A full example")
	if !ok {
		t.Fatal("docs/policy.md has no full example")
	}
	_, rest, ok = strings.Cut(rest, "```json\n")
	if !ok {
		t.Fatal("the full example has no json block")
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("the json block does not end")
	}
	return []byte(block)
}

// tool builds a verified tool definition from a JSON object.
func tool(t testing.TB, obj map[string]any) contract.Definition {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return toolRaw(t, string(raw))
}

func toolRaw(t testing.TB, raw string) contract.Definition {
	t.Helper()
	d, err := contract.NewDefinition(contract.Tools, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// stdioServer is a local server known by name.
func stdioServer(name string) Server {
	return Server{ID: nameID(name), Label: name, Transport: Stdio, Command: []string{"/usr/bin/" + name + "-server", "--token=SECRET-MARKER-ARGV"}}
}

func contractTool(t testing.TB, raw string) contract.Definition { return toolRaw(t, raw) }

// contractDefinition canonicalizes raw when it is an object.
func contractDefinition(raw []byte) ([]byte, error) {
	c, err := canon.Transform(raw)
	if err != nil {
		return nil, err
	}
	if c[0] != '{' {
		return nil, errNotObject
	}
	return c, nil
}
