package httpgw

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/gate"
)

var streamIDs = regexp.MustCompile(`id: s[0-9]+`)

// TestHiddenToolIsToldApartFromAMissingOne: bob may not see mutate. He
// calls it, and a name the server does not have, and compares the
// answers: any difference (status, framing, code, message, data) tells
// him which names exist. Both must be the same bytes but for the name.
func TestHiddenToolIsToldApartFromAMissingOne(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	// The policy file's usual shape: mutate restricted to eng, every other
	// name open, so a made-up name reaches the gate.
	w := newTeamWorld(t, routedTo(t, up.urlRoute(""), up.srv.Certificate(), restrictMutate{}))
	bob := w.token(t, "bob-app")
	call := func(id int, tool, meta string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}%s}}`, id, tool, meta)
	}
	type answer struct {
		status int
		ctype  string
		body   string
	}
	modern := func(tool string) answer {
		resp, b, err := w.modern(t, context.Background(), bob, "tools/call", tool, call(5, tool, `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`))
		if err != nil {
			t.Fatal(err)
		}
		return answer{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
	}
	resp, b := w.post(t, bob, "", initBody)
	sid := resp.Header.Get(sessionHeader)
	if sid == "" {
		t.Fatalf("initialize: %d %.200s", resp.StatusCode, b)
	}
	w.post(t, bob, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	legacy := func(tool string) answer {
		resp, b := w.post(t, bob, sid, call(5, tool, ""))
		return answer{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
	}
	for name, ask := range map[string]func(string) answer{"2026-07-28": modern, "legacy": legacy} {
		hidden, missing := ask("mutate"), ask("nosuch")
		// The name differs, and a legacy stream's event id counts the
		// session's streams: neither says anything of the tool.
		hidden.body = strings.ReplaceAll(hidden.body, "mutate", "nosuch")
		hidden.body, missing.body = streamIDs.ReplaceAllString(hidden.body, "id: s"), streamIDs.ReplaceAllString(missing.body, "id: s")
		if hidden != missing {
			t.Errorf("%s: the hidden tool's answer\n%d %s %s\ndiffers from the missing tool's\n%d %s %s", name, hidden.status, hidden.ctype, hidden.body, missing.status, missing.ctype, missing.body)
		}
		if !strings.Contains(missing.body, fmt.Sprintf(`"code":%d`, gate.CodeUnknownTool)) || !bytes.Contains([]byte(missing.body), []byte("not in the verified contract")) {
			t.Errorf("%s: the missing tool's answer: %s", name, missing.body)
		}
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if up.mutated {
		t.Fatal("bob's call of mutate reached the server")
	}
}
