package pin

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// identityVectors is testdata/pin/identity.json.
type identityVectors struct {
	Names []struct {
		Name  string `json:"name"`
		ID    string `json:"id"`
		Label string `json:"label"`
	} `json:"names"`
	Argvs []struct {
		Argv     []string `json:"argv"`
		ArgvHex  []string `json:"argv_hex"`
		InputHex string   `json:"input_hex"`
		ID       string   `json:"id"`
		Label    string   `json:"label"`
	} `json:"argvs"`
	ProfileKeys []struct {
		ProtocolVersion string   `json:"protocolVersion"`
		Capabilities    []string `json:"capabilities"`
		Key             string   `json:"key"`
	} `json:"profile_keys"`
}

func TestIdentityVectors(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../testdata/pin/identity.json")
	if err != nil {
		t.Fatal(err)
	}
	var v identityVectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Names) == 0 || len(v.Argvs) == 0 || len(v.ProfileKeys) == 0 {
		t.Fatal("no vectors loaded")
	}
	for _, n := range v.Names {
		if got := IdentityForName(n.Name); got.ID != n.ID || got.Label != n.Label {
			t.Errorf("IdentityForName(%q) = %+v, want %s %q", n.Name, got, n.ID, n.Label)
		}
	}
	for _, a := range v.Argvs {
		argv := a.Argv
		if a.ArgvHex != nil {
			argv = nil
			for _, h := range a.ArgvHex {
				b, err := hex.DecodeString(h)
				if err != nil {
					t.Fatal(err)
				}
				argv = append(argv, string(b))
			}
		}
		if got := hex.EncodeToString([]byte(argvInput(argv))); got != a.InputHex {
			t.Errorf("argvInput(%q) = %s, want %s", argv, got, a.InputHex)
		}
		if got := IdentityForArgv(argv); got.ID != a.ID || got.Label != a.Label {
			t.Errorf("IdentityForArgv(%q) = %+v, want %s %q", argv, got, a.ID, a.Label)
		}
	}
	for _, p := range v.ProfileKeys {
		if got := ProfileKey(p.ProtocolVersion, p.Capabilities); got != p.Key {
			t.Errorf("ProfileKey(%q, %q) = %q, want %q", p.ProtocolVersion, p.Capabilities, got, p.Key)
		}
	}
}

func TestEventVectors(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../testdata/pin/events/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no vectors loaded")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		c, err := parseChain(data)
		switch {
		case strings.HasPrefix(name, "valid"):
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if c.n != 6 || c.torn != strings.Contains(name, "torn") {
				t.Errorf("%s: %d events, torn %v", name, c.n, c.torn)
			}
			// Re-encoding every event gives the file back.
			if name == "valid.jsonl" {
				var b strings.Builder
				prev := zeroHash
				for _, line := range strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n") {
					var e event
					if err := json.Unmarshal([]byte(line), &e); err != nil {
						t.Fatal(err)
					}
					if e.Prev != prev {
						t.Errorf("%s: seq %d prev mismatch", name, e.Seq)
					}
					enc, err := e.encode()
					if err != nil {
						t.Fatal(err)
					}
					prev = lineHash(enc)
					b.Write(enc)
					b.WriteByte('\n')
				}
				if b.String() != string(data) {
					t.Errorf("%s does not re-encode to itself", name)
				}
			}
		case strings.HasPrefix(name, "invalid"):
			if err == nil {
				t.Errorf("%s: accepted", name)
			}
		default:
			t.Errorf("%s: name says neither valid nor invalid", name)
		}
	}
}
