package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/internal/cli"
)

func runMcpseal(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Main(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// The weather tool and listing of testdata/contract/vectors.json.
const (
	weatherTool   = "{\n  \"name\": \"get_weather\",\n  \"description\": \"Get the current weather for a city.\",\n  \"inputSchema\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}\n}"
	weatherDigest = "0e1f9f5d833ab50f809d0926079ee899088cbbc3a3b14ac89f3d5c9040dddb8e"
)

func TestDigestDefinition(t *testing.T) {
	t.Parallel()
	code, out, errOut := runMcpseal(t, weatherTool, "digest")
	if code != cli.ExitOK || out != weatherDigest+"\n" || errOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Member order and whitespace do not matter.
	code, out, _ = runMcpseal(t, `{"inputSchema":{"required":["city"],"type":"object","properties":{"city":{"type":"string"}}},"description":"Get the current weather for a city.","name":"get_weather"}`, "digest", "--kind", "tools")
	if code != cli.ExitOK || out != weatherDigest+"\n" {
		t.Fatalf("reordered: exit %d, stdout %q", code, out)
	}
}

// TestDigestAgreesWithVectors runs every vector of testdata/contract
// through the command.
func TestDigestAgreesWithVectors(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "contract", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Definitions []struct{ Name, Kind, Input, Digest string }
		Invalid     []struct{ Name, Kind, Input, InputHex, Reason string } `json:"invalidDefinitions"`
		Sets        []struct {
			Name, Kind, Digest string
			Definitions        []string
		}
		Instructions []struct {
			Name         string
			Instructions *string
			Digest       *string
		}
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Definitions) == 0 || len(v.Sets) == 0 || len(v.Instructions) == 0 || len(v.Invalid) == 0 {
		t.Fatal("no vectors loaded")
	}
	for _, d := range v.Definitions {
		if code, out, errOut := runMcpseal(t, d.Input, "digest", "--kind", d.Kind); code != cli.ExitOK || out != d.Digest+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %s", d.Name, code, out, errOut, d.Digest)
		}
	}
	for _, s := range v.Sets {
		listing := "[" + strings.Join(s.Definitions, ",\n") + "]"
		if code, out, errOut := runMcpseal(t, listing, "digest", "--kind", s.Kind); code != cli.ExitOK || out != s.Digest+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %s", s.Name, code, out, errOut, s.Digest)
		}
	}
	for _, i := range v.Instructions {
		if i.Instructions == nil {
			continue
		}
		if code, out, errOut := runMcpseal(t, *i.Instructions, "digest", "--instructions"); code != cli.ExitOK || out != *i.Digest+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %s", i.Name, code, out, errOut, *i.Digest)
		}
	}
	for _, x := range v.Invalid {
		if x.InputHex != "" || x.Reason == "not-object" && strings.HasPrefix(x.Input, "[") {
			continue // raw bytes; an array is a listing here
		}
		code, out, errOut := runMcpseal(t, x.Input, "digest", "--kind", x.Kind)
		if code != cli.ExitFailure || out != "" || !strings.HasPrefix(errOut, "mcpseal: error: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", x.Name, code, out, errOut)
		}
	}
}

func TestDigestListing(t *testing.T) {
	t.Parallel()
	a := `{"name":"b_tool","description":"B"}`
	b := `{"name":"a_tool","description":"A"}`
	_, one, _ := runMcpseal(t, "["+a+","+b+"]", "digest")
	_, two, _ := runMcpseal(t, " [ "+b+" , "+a+" ] \n", "digest")
	if len(one) != 65 || one != two {
		t.Errorf("set digest depends on order: %q vs %q", one, two)
	}
	code, out, _ := runMcpseal(t, "[]", "digest")
	if code != cli.ExitOK || out != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n" {
		t.Errorf("empty listing: exit %d, %q", code, out)
	}
}

func TestDigestInstructions(t *testing.T) {
	t.Parallel()
	code, out, _ := runMcpseal(t, "Use the weather tool for forecasts.", "digest", "--instructions")
	if code != cli.ExitOK || out != "59b91e0aff7e5e13f5c7eb890497066a703efae55ff61eee2151081704b8ff64\n" {
		t.Errorf("exit %d, %q", code, out)
	}
	// Not JSON: a JSON string is digested as its own bytes, quotes and all.
	_, quoted, _ := runMcpseal(t, `"Use the weather tool for forecasts."`, "digest", "--instructions")
	if quoted == out {
		t.Error("--instructions parsed its input as JSON")
	}
	code, _, errOut := runMcpseal(t, "bad \xff bytes", "digest", "--instructions")
	if code != cli.ExitFailure || !strings.Contains(errOut, "not valid UTF-8") || strings.Contains(errOut, "bad") {
		t.Errorf("invalid UTF-8: exit %d, stderr %q", code, errOut)
	}
}

// TestDigestRefusesAmbiguousInput: what has no digest fails, with a
// message that names the problem and never repeats the input.
func TestDigestRefusesAmbiguousInput(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"duplicate key", `{"name":"get_weather","description":"SAFE","description":"EXFILTRATE"}`, nil,
			`contract: invalid tool definition "get_weather": duplicate-key at offset 43`},
		{"duplicate key in listing", `[{"name":"a"},{"name":"b","inputSchema":{"type":"object","type":"EXFILTRATE"}}]`, nil,
			"element 2 of 2: contract: invalid tool definition \"b\": duplicate-key at offset"},
		{"duplicate key then bad syntax", `[{"name":"a","x":1,"x":2} EXFILTRATE`, nil, "stdin is not one JSON value: canon: duplicate key at offset 19"},
		{"no name", `{"description":"EXFILTRATE"}`, nil, "contract: invalid tool definition: no-name"},
		{"whole listing result", `{"tools":[{"name":"EXFILTRATE"}]}`, nil, "no-name"},
		{"resource needs uri", `{"name":"EXFILTRATE"}`, []string{"--kind", "resources"}, "contract: invalid resource definition: no-name"},
		{"not JSON", `{"name": EXFILTRATE}`, nil, "stdin is not one JSON value: canon: invalid JSON at offset 9: unexpected character"},
		{"lone surrogate", `{"name":"EXFILTRATE\ud800"}`, nil, "unpaired surrogate escape"},
		{"invalid UTF-8", "{\"name\":\"EXFILTRATE\xff\"}", nil, "invalid UTF-8"},
		{"two values", `{"name":"a"} {"name":"EXFILTRATE"}`, nil, "data after the value"},
		{"empty", "", nil, "unexpected end of input"},
		{"scalar", `"EXFILTRATE"`, nil, "neither a definition (a JSON object) nor a listing"},
		{"array of strings", `["EXFILTRATE"]`, nil, "element 1 of 1: contract: invalid tool definition: not-object"},
	} {
		code, out, errOut := runMcpseal(t, tt.stdin, append([]string{"digest"}, tt.args...)...)
		if code != cli.ExitFailure || out != "" || !strings.HasPrefix(errOut, "mcpseal: error: ") || !strings.Contains(errOut, tt.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", tt.name, code, out, errOut, tt.want)
		}
		if strings.Contains(errOut, "EXFILTRATE") || strings.Contains(errOut, "SAFE") {
			t.Errorf("%s: stderr echoes the input: %q", tt.name, errOut)
		}
	}
}

func TestDigestUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"digest", "--kind", "widgets"},
		{"digest", "--kind", "prompts", "--instructions"},
		{"digest", "file.json"},
		{"digest", "--no-such-flag"},
	} {
		code, out, errOut := runMcpseal(t, `{"name":"x"}`, args...)
		if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, "mcpseal: error: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	code, out, _ := runMcpseal(t, "", "digest", "--help")
	if code != cli.ExitOK || !strings.Contains(out, "--instructions") || !strings.Contains(out, "docs/contract-digest.md") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
}

func TestDigestInputLimit(t *testing.T) {
	t.Parallel()
	big := `{"name":"x","d":"` + strings.Repeat("a", 64<<20) + `"}`
	code, out, errOut := runMcpseal(t, big, "digest")
	if code != cli.ExitFailure || out != "" || !strings.Contains(errOut, "more than 64 MiB") {
		t.Errorf("exit %d, stdout %q, stderr %.200q", code, out, errOut)
	}
}
