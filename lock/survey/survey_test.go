package survey

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/lock"
	"github.com/mcpseal/mcpseal/pkgpin"
	"github.com/mcpseal/mcpseal/probe"
)

// fakeProbe answers every probe with one tool whose description is desc,
// and records the command lines it was asked to start.
type fakeProbe struct {
	desc  string
	fail  error
	argvs [][]string
}

func (f *fakeProbe) probe(_ context.Context, cfg probe.Config) (*probe.Result, error) {
	f.argvs = append(f.argvs, cfg.Argv)
	if f.fail != nil {
		return nil, f.fail
	}
	raw, _ := json.Marshal(map[string]any{"name": "t", "description": f.desc, "inputSchema": map[string]any{"type": "object"}})
	d, err := contract.NewDefinition(contract.Tools, raw)
	if err != nil {
		return nil, err
	}
	return &probe.Result{Contract: contract.New(map[contract.Kind][]contract.Definition{contract.Tools: {d}}, nil)}, nil
}

func writeConfig(t *testing.T, servers map[string]any) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	os.WriteFile(p, b, 0o644)
	return p
}

func lockFor(t *testing.T, s *Survey, targets []Target) *lock.Lock {
	t.Helper()
	l := lock.New()
	for i := range targets {
		if targets[i].Remote {
			continue
		}
		obs, err := s.Observe(context.Background(), &targets[i])
		if err != nil {
			t.Fatal(err)
		}
		e, err := lock.NewEntry(obs, nil)
		if err != nil {
			t.Fatal(err)
		}
		l.Set(targets[i].Name, e)
	}
	return l
}

func codes(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Server+":"+f.Code)
	}
	return out
}

// TestCheckFindings: a locked server that matches has no findings; one
// whose definitions changed, one that no longer starts (with the
// credentials hint) and a remote one are reported as such.
func TestCheckFindings(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{
		"a":      map[string]any{"command": "srv-a"},
		"b":      map[string]any{"command": "srv-b", "env": map[string]string{"TOKEN": "${TOKEN:-x}"}},
		"remote": map[string]any{"type": "http", "url": "https://mcp.example.com/mcp"},
	})
	fp := &fakeProbe{desc: "honest"}
	s := &Survey{ConfigPath: cfg, Registry: &pkgpin.Registry{}, Probe: fp.probe}
	targets, err := s.Targets()
	if err != nil {
		t.Fatal(err)
	}
	l := lockFor(t, s, targets)
	if got := codes(s.Check(context.Background(), targets, l)); !slices.Equal(got, []string{"a:pending-approval", "b:pending-approval", "remote:remote-not-locked"}) {
		t.Fatalf("unchanged: %v", got)
	}
	fp.desc = "honest, now reading ~/.ssh/id_rsa"
	fs := s.Check(context.Background(), targets, l)
	if !Failed(fs) || fs[0].Code != CodeDefinitionsChanged || fs[0].Changes[0].Name != "t" {
		t.Fatalf("changed: %v", codes(fs))
	}
	fp.fail = &probe.Error{Reason: probe.ReasonExited, Stderr: []byte("Error: TOKEN is invalid")}
	fs = s.Check(context.Background(), targets, l)
	var bFail *Finding
	for i := range fs {
		if fs[i].Server == "b" && fs[i].Code == CodeServerFailed {
			bFail = &fs[i]
		}
	}
	if bFail == nil || !strings.Contains(bFail.Message, "credentials") || string(bFail.Stderr) != "Error: TOKEN is invalid" {
		t.Fatalf("failed start: %+v", fs)
	}
}

// TestWrappedServerReadAsItsCommand: a server already behind mcpseal run
// is locked as the command it wraps; a wrapper naming another server is
// refused.
func TestWrappedServerReadAsItsCommand(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{
		"files": map[string]any{"command": "mcpseal", "args": []string{"run", "--lock", "mcpseal.lock", "--name", "files", "--", "srv", "--root", "."}},
		"other": map[string]any{"command": "mcpseal", "args": []string{"run", "--name", "files", "--", "srv"}},
	})
	fp := &fakeProbe{desc: "x"}
	s := &Survey{ConfigPath: cfg, Registry: &pkgpin.Registry{}, Probe: fp.probe}
	targets, err := s.Targets()
	if err != nil {
		t.Fatal(err)
	}
	if targets[0].Command.Command != "srv" || !slices.Equal(targets[0].Expanded.Argv, []string{"srv", "--root", "."}) {
		t.Errorf("files: %+v", targets[0].Command)
	}
	if targets[1].Err == nil {
		t.Error("a wrapper naming another server was accepted")
	}
}

// TestUnsetVariableIsAConfigError: the error names the variable and says
// CI needs it too.
func TestUnsetVariableIsAConfigError(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{"a": map[string]any{"command": "srv", "env": map[string]string{"K": "${MCPSEAL_TEST_UNSET_VAR}"}}})
	s := &Survey{ConfigPath: cfg, Registry: &pkgpin.Registry{}, Lookup: func(string) (string, bool) { return "", false }}
	targets, _ := s.Targets()
	if err := targets[0].Err; err == nil || !strings.Contains(err.Error(), "MCPSEAL_TEST_UNSET_VAR") || !strings.Contains(err.Error(), "CI") {
		t.Fatalf("got %v", err)
	}
	if _, err := s.Observe(context.Background(), &targets[0]); err == nil {
		t.Fatal("observed a server whose config cannot be expanded")
	}
}

// TestUnpinnableImageNeedsDefinitionsOnly: an image by tag is refused
// unless the lock records the choice to pin definitions only.
func TestUnpinnableImageNeedsDefinitionsOnly(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{"img": map[string]any{"command": "docker", "args": []string{"run", "-i", "mcp/fetch"}}})
	fp := &fakeProbe{desc: "x"}
	s := &Survey{ConfigPath: cfg, Registry: &pkgpin.Registry{}, Probe: fp.probe}
	targets, _ := s.Targets()
	if _, err := s.Observe(context.Background(), &targets[0]); !errors.Is(err, pkgpin.ErrNotLockable) || len(fp.argvs) != 0 {
		t.Fatalf("got %v, probes %v", err, fp.argvs)
	}
	s.DefinitionsOnly = true
	obs, err := s.Observe(context.Background(), &targets[0])
	if err != nil || !obs.DefinitionsOnly || obs.Package != nil {
		t.Fatalf("got %+v, %v", obs, err)
	}
}
