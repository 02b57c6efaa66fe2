package lock

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/pkgpin"
)

func def(t testing.TB, k contract.Kind, v map[string]any) contract.Definition {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	d, err := contract.NewDefinition(k, raw)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func tool(t testing.TB, name, description string) contract.Definition {
	return def(t, contract.Tools, map[string]any{"name": name, "description": description, "inputSchema": map[string]any{"type": "object"}})
}

func contractOf(instr *string, defs ...contract.Definition) *contract.Contract {
	m := map[contract.Kind][]contract.Definition{}
	for _, d := range defs {
		m[d.Kind] = append(m[d.Kind], d)
	}
	return contract.New(m, instr)
}

func ptr(s string) *string { return &s }

var testApproval = Approval{ApprovedBy: "github:alice", Via: "pr", Ref: "pr-12", Time: "2026-11-02T10:00:00Z"}

// sampleLock is a lock with one server of every kind of thing: a package
// pin, tools (one approved, one pending), a prompt, a resource, a
// template and approved instructions.
func sampleLock(t testing.TB) *Lock {
	t.Helper()
	c := contractOf(ptr("Use read_file for files under the project."),
		tool(t, "read_file", "Reads a file."),
		tool(t, "write_file", "Writes a file."),
		def(t, contract.Prompts, map[string]any{"name": "summarize", "description": "Summarizes a file."}),
		def(t, contract.Resources, map[string]any{"uri": "file:///README.md", "name": "readme", "mimeType": "text/markdown"}),
		def(t, contract.ResourceTemplates, map[string]any{"uriTemplate": "file:///{path}", "name": "file"}),
	)
	obs := Observation{
		Command: NewCommand("npx", []string{"-y", "@acme/mcp-files", "${PROJECT_DIR:-.}"}, "", map[string]string{"ACME_TOKEN": "${ACME_TOKEN}"}),
		Package: &pkgpin.Package{Ecosystem: pkgpin.NPM, Name: "@acme/mcp-files", Version: "1.4.2",
			Integrity: "sha512-" + strings.Repeat("A", 86) + "=="},
		Contract: c,
	}
	e, err := NewEntry(obs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range e.Pending() {
		if p.Name == "write_file" {
			continue
		}
		a := testApproval
		a.Digest = p.Digest
		if err := e.Approve(p.Kind, p.Name, a); err != nil {
			t.Fatal(err)
		}
	}
	l := New()
	l.Set("files", e)
	return l
}

func marshal(t testing.TB, l *Lock) []byte {
	t.Helper()
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
