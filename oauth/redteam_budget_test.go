package oauth_test

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/testoauth"
	"github.com/mcpseal/mcpseal/oauth"
)

// TestAttackInFlightFloodDrainsAVictimsAddressBudget: an attacker keeps
// the 16 introspection slots busy (16 made-up tokens from 16 addresses,
// against an issuer that is slow). Meanwhile a victim at another address
// presents its real token and retries as told (503, Retry-After). Each of
// those attempts is refused for want of a slot, none reaches the issuer,
// yet each spends the victim address's own unknown-token budget (take
// spends before it looks for a slot). When the flood ends the victim's
// real token is still refused as busy: the attacker has made the victim's
// address pay for introspections that never happened.
func TestAttackInFlightFloodDrainsAVictimsAddressBudget(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := introspecting(t, as)
	release := as.StallIntrospection()
	defer release()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := oauth.WithPeer(context.Background(), netip.AddrFrom4([4]byte{203, 0, 113, byte(i + 1)}))
			v.Verify(ctx, fmt.Sprintf("made_up_%032d", i), resource+"/mem")
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); as.IntrospectionCount() < 16; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the attacker's introspections did not start")
		}
	}
	victim := oauth.WithPeer(context.Background(), netip.MustParseAddr("198.51.100.9"))
	real := as.MintOpaque(as.Claims(alice, "c", resource+"/mem"))
	for range 30 {
		if _, f := v.Verify(victim, real, resource+"/mem"); f == nil || f.Reason != oauth.ReasonBusy {
			t.Fatalf("while every slot is taken: %v, want busy", f)
		}
	}
	if n := as.IntrospectionCount(); n != 16 {
		t.Fatalf("%d introspections; the victim's 30 attempts should have reached none", n)
	}
	release()
	wg.Wait()
	// The flood is over; the issuer answers at once again.
	if id, f := v.Verify(victim, real, resource+"/mem"); f != nil || id == nil {
		t.Fatalf("after the flood the victim's real token, never introspected, is refused: %s (%d introspections in all)", f.Reason, as.IntrospectionCount())
	}
}
