package policy

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

type invalidVector struct {
	Name   string `json:"name"`
	Policy string `json:"policy"`
	Line   int    `json:"line"`
	Col    int    `json:"col"`
	Path   string `json:"path"`
	Error  string `json:"error"`
}

func loadInvalidVectors(t testing.TB) []invalidVector {
	t.Helper()
	data, err := os.ReadFile("../testdata/policy/invalid.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors []invalidVector `json:"vectors"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors loaded")
	}
	for i := range f.Vectors {
		v := &f.Vectors[i]
		v.Policy = strings.ReplaceAll(v.Policy, "MEMID", nameID("memory"))
		if v.Policy == "INVALIDUTF8" {
			v.Policy = `{"version": 1, "defaults": {"` + "\xff" + `": 1}}`
		}
	}
	return f.Vectors
}

// TestInvalidPolicyVectors: every file in testdata/policy/invalid.json is
// refused, at the line, column and key path the vector names.
func TestInvalidPolicyVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadInvalidVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			_, err := Parse("policy.json", []byte(v.Policy))
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse = %v, want a *FileError", err)
			}
			if fe.Line != v.Line || fe.Col != v.Col || fe.Path != v.Path || !strings.Contains(fe.Msg, v.Error) {
				t.Errorf("got %d:%d path %q: %s\nwant %d:%d path %q: ...%s...", fe.Line, fe.Col, fe.Path, fe.Msg, v.Line, v.Col, v.Path, v.Error)
			}
			if !strings.HasPrefix(err.Error(), "policy.json") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

// TestCaseVariantKeyCannotGrant: encoding/json alone would read "Allow"
// as "allow" and let a file that looks inert grant every tool.
func TestCaseVariantKeyCannotGrant(t *testing.T) {
	t.Parallel()
	_, err := Parse("p", []byte(`{"version": 1, "defaults": {"allow": ["read"], "ALLOW": ["*"]}}`))
	if err == nil || !strings.Contains(err.Error(), `unknown key "ALLOW"`) {
		t.Fatalf("Parse = %v, want unknown key", err)
	}
}

// TestRepeatedDenyCannotBeOverridden: a second "deny" that empties the
// first is refused, not resolved by "last one wins".
func TestRepeatedDenyCannotBeOverridden(t *testing.T) {
	t.Parallel()
	_, err := Parse("p", []byte(`{"version": 1, "servers": {"fs": {"deny": ["write_file"], "deny": []}}}`))
	if err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Fatalf("Parse = %v, want a repeated-key error", err)
	}
}

func TestPolicyTooLarge(t *testing.T) {
	t.Parallel()
	big := `{"version": 1, "defaults": {"tools": {"x": {"description": "` + strings.Repeat("a", maxPolicyBytes) + `"}}}}`
	if _, err := Parse("p", []byte(big)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Parse = %v, want a size error", err)
	}
}

func TestPolicyNestedTooDeep(t *testing.T) {
	t.Parallel()
	deep := `{"version": 1, "defaults": {"allow": ` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}`
	if _, err := Parse("p", []byte(deep)); err == nil {
		t.Fatal("a deeply nested value was accepted")
	}
}

func TestErrorKeyIsQuotedAndBounded(t *testing.T) {
	t.Parallel()
	key := "\x1b[31m" + strings.Repeat("k", 200)
	_, err := Parse("p", []byte(`{"version": 1, "defaults": {"`+strings.ReplaceAll(key, "\x1b", `\u001b`)+`": 1}}`))
	if err == nil {
		t.Fatal("accepted")
	}
	if strings.Contains(err.Error(), "\x1b") || strings.Contains(err.Error(), strings.Repeat("k", 100)) {
		t.Errorf("error echoes a raw or unbounded key: %q", err)
	}
}
