package httpgw

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/pin"
)

// TestAttackExpiredAnswerLeavesTheCallRunning: alice's call is forwarded
// with a token that expires while it runs. The gateway answers her
// -32015 "the access token expired before the answer; get a new token and
// retry", but it neither cancels the call at the server nor withholds it:
// the server finishes it, and the gate admits the result (audited as
// allowed), for a caller that was just told the call did not complete.
// A client that follows the advice runs the tool twice (a payment, a
// delete, a message sent twice).
func TestAttackExpiredAnswerLeavesTheCallRunning(t *testing.T) {
	t.Parallel()
	up := newSlowUpstream(t)
	up.delay = 6 * time.Second
	var mu sync.Mutex
	var results []gate.Event
	w := newTeamWorld(t, routedTo(t, up.route(), up.srv.Certificate(), restrictMutate{}), func(c *Config) {
		c.Guard = func(string, pin.Identity, *Route) (Guard, error) {
			return Guard{Hooks: gate.Hooks{
				Result: func(gate.CallInfo, []byte) gate.Verdict { return gate.Verdict{Kind: gate.Allow} },
				Event: func(e gate.Event) {
					if e.Op == "result" {
						mu.Lock()
						results = append(results, e)
						mu.Unlock()
					}
				},
			}}, nil
		}
	})
	_, b, err := w.modern(t, context.Background(), w.almostExpired(), "tools/call", "slow", slowCall)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"token-expired"`) || !strings.Contains(string(b), "retry") {
		t.Fatalf("want the expiry answer: %.300s", b)
	}
	time.Sleep(up.delay)
	up.mu.Lock()
	cancelled := false
	for _, body := range up.bodies {
		cancelled = cancelled || strings.Contains(body, "notifications/cancelled")
	}
	up.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if !cancelled || len(results) > 0 {
		t.Fatalf("alice was told to retry, yet the server was sent no cancel (cancelled=%v) and %d result(s) of the call came back and were admitted: %+v", cancelled, len(results), results)
	}
}
