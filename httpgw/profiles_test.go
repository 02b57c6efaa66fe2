package httpgw

import (
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
	for m := range 4 {
		tok := w.as.Mint(w.as.Claims(testoauth.User{Subject: fmt.Sprintf("mallory-%d", m), Scopes: []string{"mcp:tools"}}, "bob-app", w.url+"/docs"))
		for i := range 4 {
			if got := w.listModern(t, tok, i+1, fmt.Sprintf(`{"x%d-%d":{}}`, m, i)); !strings.Contains(got, `"tools"`) {
				t.Fatalf("mallory-%d's profile %d: %.300s", m, i, got)
			}
		}
	}
	alice := w.token(t, "alice-app")
	if got := w.listModern(t, alice, 1, `{"roots":{}}`); !strings.Contains(got, `"tools"`) {
		t.Fatalf("after four callers' made-up profiles alice's 2026-07-28 listing is refused: %.300s", got)
	}
}
