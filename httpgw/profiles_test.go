package httpgw

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/internal/testoauth"
)

// TestFourCallersFillTheSharedSessionsProfiles: each caller may bring only
// 4 profiles into a route's shared 2026-07-28 session, but four callers
// together bring 16, the gate's limit. A fifth caller's new profile must
// still be served: the least recently used idle profile makes room.
func TestFourCallersFillTheSharedSessionsProfiles(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	w := newTeamWorld(t, routedTo(t, up.urlRoute(""), up.srv.Certificate(), nil))
	list := func(token string, id int, caps string) string {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}}}`, id, caps)
		_, b, err := w.modern(t, context.Background(), token, "tools/list", "", body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for m := range 4 {
		tok := w.as.Mint(w.as.Claims(testoauth.User{Subject: fmt.Sprintf("mallory-%d", m), Scopes: []string{"mcp:tools"}}, "bob-app", w.url+"/docs"))
		for i := range 4 {
			if got := list(tok, i+1, fmt.Sprintf(`{"x%d-%d":{}}`, m, i)); !strings.Contains(got, `"tools"`) {
				t.Fatalf("mallory-%d's profile %d: %.300s", m, i, got)
			}
		}
	}
	alice := w.token(t, "alice-app")
	if got := list(alice, 1, `{"roots":{}}`); !strings.Contains(got, `"tools"`) {
		t.Fatalf("after four callers' made-up profiles alice's 2026-07-28 listing is refused: %.300s", got)
	}
}
