package audit

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateVectors = flag.Bool("update-vectors", false, "rewrite testdata/audit/log")

const vectorDir = "../testdata/audit/log"

// buildVectorLog writes the reference log: 12 events with a fixed clock,
// rotated twice, under home.
func buildVectorLog(t *testing.T, home string) {
	l, err := Open(home, Options{MaxFileBytes: 1500, MaxFiles: 100, Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	events := []Event{
		{Op: OpConnect, Outcome: Allowed, Server: testServer, Label: "memory", Stage: "before_connect", Code: "local-pass", Provider: "builtin"},
		{Op: OpList, Outcome: Allowed, Server: testServer, Label: "memory", Contract: testDigest, Count: 9},
		{Op: OpWithhold, Outcome: Withheld, Server: testServer, Label: "memory", Tool: "delete_entities", Code: "denied", Digest: testDigest},
		{Op: OpCall, Outcome: Allowed, Server: testServer, Label: "memory", Tool: "read_graph", Stage: "before_tool_call", Code: "allowed", Provider: "builtin", Digest: testDigest, Bytes: 58, Millis: 3},
		{Op: OpCall, Outcome: Refused, Server: testServer, Label: "memory", Tool: "create_entities", Code: "input-schema", Digest: testDigest, Bytes: 97},
		{Op: OpConfirm, Outcome: Asked, Server: testServer, Label: "memory", Tool: "add_observations", Stage: "before_tool_call", Code: "confirm-destructive", Provider: "builtin", Digest: testDigest},
		{Op: OpConfirm, Outcome: Declined, Server: testServer, Label: "memory", Tool: "add_observations", Stage: "before_tool_call", Code: "confirm-declined", Digest: testDigest, Millis: 4200},
		{Op: OpCall, Outcome: Refused, Server: testServer, Label: "memory", Tool: "search_nodes", Stage: "before_tool_call", Code: "provider-block", Provider: "org-preflight", Digest: testDigest, Receipt: testDigest},
		{Op: OpWithhold, Outcome: Withheld, Server: testServer, Label: "memory", Tool: "open_nodes", Code: "output-schema", Digest: testDigest, Bytes: 2048},
		{Op: OpCall, Outcome: Warned, Server: testServer, Label: "memory", Tool: "read_graph", Stage: "before_tool_call", Code: "warned", Provider: "org-preflight", Digest: testDigest},
		{Op: OpDrift, Outcome: Refused, Server: testServer, Label: "memory", Code: "drift", Contract: testDigest, Count: 2},
		{Op: OpConnect, Outcome: Refused, Server: "0123456789abcdef", Label: "npx [2 args]", Stage: "before_connect", Code: "local-refused", Provider: "builtin"},
	}
	for _, e := range events {
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReferenceLog: testdata/audit/log is the log this package writes for
// a fixed sequence of events (so the format cannot change unnoticed), and
// it verifies — the reference for other implementations of the verifier.
func TestReferenceLog(t *testing.T) {
	home := t.TempDir()
	buildVectorLog(t, home)
	dir := Dir(home)
	if *updateVectors {
		os.RemoveAll(vectorDir)
		if err := os.MkdirAll(vectorDir, 0o755); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.Name() == lockName {
				continue
			}
			data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			if err := os.WriteFile(filepath.Join(vectorDir, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, err := os.ReadDir(vectorDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 4 {
		t.Fatalf("the reference log has %d files, want rotated files, current.jsonl and head", len(want))
	}
	for _, e := range want {
		w, _ := os.ReadFile(filepath.Join(vectorDir, e.Name()))
		g, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || !bytes.Equal(g, w) {
			t.Errorf("%s differs from the log written now (%v):\n got %s\nwant %s", e.Name(), err, g, w)
		}
	}
	// The reference itself verifies, copied under a home of its own.
	copyHome := t.TempDir()
	if err := os.MkdirAll(Dir(copyHome), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, e := range want {
		data, _ := os.ReadFile(filepath.Join(vectorDir, e.Name()))
		os.WriteFile(filepath.Join(Dir(copyHome), e.Name()), data, 0o600)
	}
	if rep := mustVerify(t, copyHome); !rep.OK() || rep.Events != 12 {
		t.Errorf("%+v\n%s", rep, faultText(rep))
	}
}
