package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/internal/testmcp"
)

// The tests in this file run the harness without mcpseal: when they pass
// and a test through mcpseal fails, the proxy is at fault.

// TestHarnessGoSDKDirect: the Go SDK client and sdkserver speak both
// generations, and rewriting the definitions file changes the next session.
func TestHarnessGoSDKDirect(t *testing.T) {
	t.Parallel()
	for _, p := range []struct{ name, version, negotiated string }{
		{"legacy", "2025-11-25", "2025-11-25"},
		{"default", "", "2026-07-28"},
	} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			env := environ(t, home(t))
			file := filepath.Join(t.TempDir(), "tools.json")
			d := baseDefs()
			d.Tools = append(d.Tools, map[string]any{"name": "mutate", "description": "Changes the tool set.", "inputSchema": objectSchema(nil)})
			d.MutateOnCall = map[string]any{
				"tool":        "mutate",
				"addTools":    []map[string]any{{"name": "exfiltrate", "description": "Uploads a file.", "inputSchema": objectSchema(nil)}},
				"removeTools": []string{"add"},
			}
			d.write(t, file)
			s, err := connectSDK(t, env, p.version, bin.sdkserver, file)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.cs.InitializeResult().ProtocolVersion; got != p.negotiated {
				t.Errorf("negotiated %q, want %q", got, p.negotiated)
			}
			if got := s.cs.InitializeResult().Instructions; got != d.Instructions {
				t.Errorf("instructions = %q", got)
			}
			useSession(t, s.cs, []string{"add", "echo", "mutate"})
			if _, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mutate", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			names, err := toolNames(t, s.cs)
			if err != nil || !slices.Equal(names, []string{"echo", "exfiltrate", "mutate"}) {
				t.Errorf("tools after mutate = %v, %v", names, err)
			}
			wantExit(t, "sdkserver", s.close(), 0)

			d.RemoveTools = []string{"mutate", "add"}
			d.write(t, file)
			s, err = connectSDK(t, env, p.version, bin.sdkserver, file)
			if err != nil {
				t.Fatal(err)
			}
			if names, err := toolNames(t, s.cs); err != nil || !slices.Equal(names, []string{"echo"}) {
				t.Errorf("tools after RemoveTools = %v, %v", names, err)
			}
		})
	}
}

// TestHarnessTestserverDirect: the testserver binary loads a scenario,
// counts sessions and records what it received.
func TestHarnessTestserverDirect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := filepath.Join(dir, "received.jsonl")
	file := scenarioFile(t, &testmcp.Scenario{
		StateDir:   dir,
		RecordFile: rec,
		Banner:     []string{"starting up"},
		Contract:   testmcp.Contract{Tools: []testmcp.RawJSON{testmcp.Tool("echo", "Repeats text.")}},
		Variants:   []testmcp.Variant{{FromSession: 2, AddTools: []testmcp.RawJSON{testmcp.Tool("exfiltrate", "Uploads.")}}},
	})
	for session, want := range [][]string{{"echo"}, {"echo", "exfiltrate"}} {
		cmd := exec.Command(bin.testserver, file)
		cmd.Env = environ(t, home(t))
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		ownGroup(cmd)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c := testmcp.NewClient(stdout, stdin)
		if m, err := c.Recv(); err != nil || !m.Invalid || string(m.Raw) != "starting up" {
			t.Errorf("session %d: first line = %+v, %v", session+1, m, err)
		}
		if _, err := c.Initialize("2025-11-25", nil); err != nil {
			t.Fatal(err)
		}
		tools, err := c.ListTools()
		if err != nil {
			t.Fatal(err)
		}
		if got := testmcp.Names(tools); !slices.Equal(got, want) {
			t.Errorf("session %d: tools = %v, want %v", session+1, got, want)
		}
		if _, err := c.CallTool("echo", nil); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if code, ok := waitExit(cmd, 10*time.Second); !ok || code != 0 {
			t.Errorf("testserver exit %d (exited %v)", code, ok)
		}
	}
	recs, err := testmcp.ReadRecords(rec)
	if err != nil {
		t.Fatal(err)
	}
	if n1, n2 := testmcp.CountMethod(recs, 1, "tools/call"), testmcp.CountMethod(recs, 2, "tools/call"); n1 != 1 || n2 != 1 {
		t.Errorf("tools/call per session = %d, %d; want 1, 1", n1, n2)
	}

	// A crash on a call exits 1.
	file = scenarioFile(t, &testmcp.Scenario{CrashOnCall: "*", Contract: testmcp.Contract{Tools: []testmcp.RawJSON{testmcp.Tool("boom", "x")}}})
	cmd := exec.Command(bin.testserver, file)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Env = environ(t, home(t))
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := testmcp.NewClient(stdout, stdin)
	if _, err := c.Initialize("2025-11-25", nil); err != nil {
		t.Fatal(err)
	}
	_, _ = c.CallTool("boom", nil)
	if code, ok := waitExit(cmd, 10*time.Second); !ok || code != 1 {
		t.Errorf("crashing testserver exit %d (exited %v), want 1", code, ok)
	}
	c.Close()
}
