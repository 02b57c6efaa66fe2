package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/internal/testmcp"
)

// The host policy end to end (issue 4): the real binary, the scenario
// server recording what reaches it, and a client that can answer
// confirmations.

const policyServer = "pol"

func policyScenario(dir string) *testmcp.Scenario {
	return &testmcp.Scenario{
		StateDir:   dir,
		RecordFile: filepath.Join(dir, "received.jsonl"),
		Contract: testmcp.Contract{Tools: []testmcp.RawJSON{
			testmcp.RawJSON(`{"name":"echo","description":"Repeats text.","inputSchema":{"type":"object","properties":{"text":{"type":"string","maxLength":10}},"required":["text"]},"annotations":{"readOnlyHint":true}}`),
			testmcp.RawJSON(`{"name":"secret_tool","description":"MARKER-DESC uploads your files.","inputSchema":{"type":"object"}}`),
			testmcp.RawJSON(`{"name":"typed","description":"Counts.","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]},"annotations":{"readOnlyHint":true}}`),
			testmcp.RawJSON(`{"name":"danger","description":"Deletes things.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`),
		}},
		CallResult: testmcp.RawJSON(`{"content":[{"type":"text","text":"MARKER-RESULT"}],"structuredContent":{"n":"MARKER-RESULT"}}`),
	}
}

func writePolicy(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const policyBody = `{"version": 1,
 "defaults": {"confirm_destructive": true},
 "servers": {"pol": {"deny": ["secret_tool"], "tools": {"echo": {"description": "Host text for echo."}}}}}`

func rpcCode(t *testing.T, err error) (int, string) {
	t.Helper()
	var re *testmcp.RPCError
	if !errors.As(err, &re) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	var d struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(re.Data, &d)
	return re.Code, d.Reason
}

func TestPolicyEndToEnd(t *testing.T) {
	t.Parallel()
	h := home(t)
	dir := t.TempDir()
	pol := writePolicy(t, policyBody)
	p := startScenario(t, h, []string{"--name", policyServer, "--policy", pol}, policyScenario(dir))
	answer := `{"action":"decline"}`
	p.Elicit = func(json.RawMessage) string { return answer }
	if _, err := p.Initialize("2025-06-18", map[string]any{"elicitation": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	tools, err := p.ListTools()
	if err != nil {
		t.Fatal(err)
	}
	listing := ""
	for _, tl := range tools {
		listing += string(tl)
	}
	if strings.Contains(listing, "secret_tool") || strings.Contains(listing, "MARKER-DESC") {
		t.Errorf("denied tool listed: %s", listing)
	}
	if !strings.Contains(listing, "Host text for echo.") || strings.Contains(listing, "Repeats text.") {
		t.Errorf("description override not what the client sees: %s", listing)
	}
	// A denied tool is refused when called anyway.
	if _, err := p.CallTool("secret_tool", map[string]any{}); err == nil {
		t.Error("denied tool called")
	} else if code, reason := rpcCode(t, err); code != -32009 || reason != "denied" {
		t.Errorf("denied call: %d %s", code, reason)
	}
	// Arguments that violate the pinned schema never reach the server.
	for _, args := range []map[string]any{{"text": 5}, {}, {"text": "much longer than ten"}} {
		if _, err := p.CallTool("echo", args); err == nil {
			t.Errorf("bad arguments %v accepted", args)
		} else if code, reason := rpcCode(t, err); code != -32010 || reason != "input-schema" {
			t.Errorf("bad arguments %v: %d %s", args, code, reason)
		}
	}
	if _, err := p.CallTool("echo", map[string]any{"text": "MARKER-ARG"}); err != nil {
		t.Fatalf("valid call: %v", err)
	}
	// A result that violates its output schema is withheld.
	if res, err := p.CallTool("typed", map[string]any{}); err == nil {
		t.Errorf("schema-violating result delivered: %s", res)
	} else if code, reason := rpcCode(t, err); code != -32013 || reason != "output-schema" {
		t.Errorf("typed: %d %s", code, reason)
	}
	// A destructive tool asks the person: decline refuses, accept proceeds.
	if _, err := p.CallTool("danger", map[string]any{}); err == nil {
		t.Error("declined call went through")
	} else if code, _ := rpcCode(t, err); code != -32012 {
		t.Errorf("declined: code %d", code)
	}
	answer = `{"action":"accept","content":{"confirm":true}}`
	if _, err := p.CallTool("danger", map[string]any{}); err != nil {
		t.Errorf("accepted call: %v", err)
	}
	wantExit(t, "mcpseal", p.Close(), 0)

	recs, err := testmcp.ReadRecords(filepath.Join(dir, "received.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := testmcp.CountMethod(recs, 1, "tools/call"); n != 3 {
		t.Errorf("the server received %d tools/call; want 3 (echo, typed, the accepted danger)", n)
	}

	// The audit log holds decisions, not content, and verifies.
	files, _ := filepath.Glob(filepath.Join(h, "audit", "*"))
	if len(files) == 0 {
		t.Fatal("no audit log written")
	}
	all := ""
	for _, f := range files {
		b, _ := os.ReadFile(f)
		all += string(b)
	}
	for _, marker := range []string{"MARKER-ARG", "MARKER-RESULT", "MARKER-DESC", "Host text"} {
		if strings.Contains(all, marker) {
			t.Errorf("audit log contains %q", marker)
		}
	}
	for _, want := range []string{`"op":"call"`, `"op":"withhold"`, `"op":"confirm"`, `"code":"denied"`, `"code":"input-schema"`} {
		if !strings.Contains(all, want) {
			t.Errorf("audit log lacks %s", want)
		}
	}
	if _, stderr, code := mcpseal(t, h, "audit", "verify"); code != 0 {
		t.Errorf("audit verify: %d %s", code, stderr)
	}
	cur := filepath.Join(h, "audit", "current.jsonl")
	b, err := os.ReadFile(cur)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cur, []byte(strings.Replace(string(b), `"outcome":"refused"`, `"outcome":"allowed"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, code := mcpseal(t, h, "audit", "verify"); code != 1 {
		t.Errorf("tampered audit log: verify exit %d, want 1", code)
	}
}

func TestPolicyConfirmWithoutElicitationCapability(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startScenario(t, home(t), []string{"--name", policyServer, "--policy", writePolicy(t, policyBody)}, policyScenario(dir))
	if _, err := p.Initialize("2025-06-18", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CallTool("danger", map[string]any{}); err == nil {
		t.Fatal("a call that needs confirmation went through without a way to ask")
	} else if code, _ := rpcCode(t, err); code != -32012 {
		t.Errorf("code %d", code)
	}
	p.Close()
	recs, _ := testmcp.ReadRecords(filepath.Join(dir, "received.jsonl"))
	if n := testmcp.CountMethod(recs, 1, "tools/call"); n != 0 {
		t.Errorf("server received %d calls", n)
	}
}

func TestPolicyBeforeConnectRefusalStartsNoProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := writePolicy(t, `{"version": 1, "servers": {"pol": {"connect": "block"}}}`)
	p := startScenario(t, home(t), []string{"--name", policyServer, "--policy", pol}, policyScenario(dir))
	_, err := p.Initialize("2025-06-18", nil)
	if err == nil {
		t.Fatal("initialize succeeded for a blocked server")
	}
	if code, reason := rpcCode(t, err); code != -32011 || reason != "server-blocked" {
		t.Errorf("%d %s", code, reason)
	}
	wantExit(t, "mcpseal", p.Close(), 7)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the server ran: its state folder holds %v", entries)
	}
}
