package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/tlog/tlogtest"
)

func TestLookupCommandAnswersOnStdio(t *testing.T) {
	t.Setenv("MCPSEAL_HOME", t.TempDir())
	f := tlogtest.Build(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcpseal_server_status","arguments":{"server":"weather-mcp"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcpseal_my_servers","arguments":{}}}`,
	}, "\n") + "\n"
	var out, errb bytes.Buffer
	code := Main([]string{"lookup", "--log", f.Dir, "--key", f.WriteKey(t)}, strings.NewReader(in), &out, &errb)
	if code != 0 {
		t.Fatalf("%d %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], `\"changes\":1`) || !strings.Contains(lines[2], `\"pendingReviews\":0`) {
		t.Fatalf("%q", lines)
	}
	for _, m := range tlogtest.Markers {
		if strings.Contains(out.String(), m) {
			t.Fatalf("output contains %q", m)
		}
	}
}

func TestLookupRefusesUnverifiedLog(t *testing.T) {
	t.Setenv("MCPSEAL_HOME", t.TempDir())
	f := tlogtest.Build(t)
	_, otherPub := logFixture(t)
	_, errs, code := mcpseal(t, "lookup", "--log", f.Dir, "--key", otherPub)
	if code == 0 || !strings.Contains(errs, "the log does not verify") {
		t.Fatalf("%d %s", code, errs)
	}
}
