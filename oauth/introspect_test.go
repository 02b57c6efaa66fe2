package oauth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/testoauth"
	"github.com/mcpseal/mcpseal/oauth"
)

func introspecting(t *testing.T, as *testoauth.Server) *oauth.Verifier {
	t.Helper()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(testoauth.IntrospectSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return verifierFrom(t, as, fmt.Sprintf(`{"version": 1, "resource": %q, "scopes": ["mcp:tools"],
	  "issuers": [{"issuer": %q, "introspection": {"client_id": %q, "secret_file": %q}}]}`, resource, as.Issuer, testoauth.IntrospectClient, secret))
}

func TestOpaqueTokenIsIntrospectedAndCached(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := introspecting(t, as)
	tok := as.MintOpaque(as.Claims(alice, "cli-1", resource+"/mem"))
	for range 3 {
		id, f := v.Verify(context.Background(), tok, resource+"/mem")
		if f != nil || id.Subject != "alice" || id.ClientID != "cli-1" || id.Groups[0] != "eng" {
			t.Fatalf("%+v %v", id, f)
		}
	}
	if as.Introspections != 1 {
		t.Fatalf("%d introspections for three uses; want 1 (cached)", as.Introspections)
	}
	// The cache is per resource: the audience rule still holds.
	if _, f := v.Verify(context.Background(), tok, resource+"/docs"); f == nil || f.Reason != oauth.ReasonAudience {
		t.Fatalf("the token for /mem checked for /docs: %v", f)
	}
}

func TestRevokedOpaqueTokenIsRefused(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := introspecting(t, as)
	tok := as.MintOpaque(as.Claims(alice, "c", resource+"/mem"))
	as.Revoke(tok)
	wantRefused(t, v, tok, oauth.ReasonInactive, 401)
	// An opaque token with no introspection configured is malformed.
	wantRefused(t, verifier(t, as, oauth.Options{}), tok, oauth.ReasonMalformed, 401)
}

func TestOpaqueTokenForAnotherAudienceIsRefused(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := introspecting(t, as)
	c := as.Claims(alice, "c", "https://other.example/mcp")
	wantRefused(t, v, as.MintOpaque(c), oauth.ReasonAudience, 401)
	c = as.Claims(alice, "c", resource+"/mem")
	delete(c, "exp")
	wantRefused(t, v, as.MintOpaque(c), oauth.ReasonExpired, 401)
}

// TestRandomOpaqueTokenFloodIsBudgetedPerAddress: one address sends made-up
// opaque tokens, each of which the cache has never seen; only its budget
// of them reaches the issuer, and another address's real token still
// verifies.
func TestRandomOpaqueTokenFloodIsBudgetedPerAddress(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := introspecting(t, as)
	attacker := oauth.WithPeer(context.Background(), netip.MustParseAddr("203.0.113.7"))
	busy := 0
	for i := range 200 {
		_, f := v.Verify(attacker, fmt.Sprintf("made_up_%032d", i), resource+"/mem")
		switch {
		case f == nil:
			t.Fatal("a made-up token verified")
		case f.Reason == oauth.ReasonBusy && f.Status == http.StatusServiceUnavailable:
			busy++
		case f.Reason != oauth.ReasonInactive:
			t.Fatalf("refused with %s", f.Reason)
		}
	}
	if n := as.IntrospectionCount(); n > 31 || busy < 169 {
		t.Fatalf("%d introspections and %d refused as busy for 200 made-up tokens from one address; want at most 31", n, busy)
	}
	// An IPv6 attacker does not get a budget per address of its /64.
	for i := range 40 {
		a := netip.MustParseAddr(fmt.Sprintf("2001:db8::%x", i+1))
		v.Verify(oauth.WithPeer(context.Background(), a), fmt.Sprintf("made_up_v6_%032d", i), resource+"/mem")
	}
	if n := as.IntrospectionCount(); n > 62 {
		t.Fatalf("%d introspections after 40 tokens from 40 addresses of one /64", n)
	}
	colleague := oauth.WithPeer(context.Background(), netip.MustParseAddr("198.51.100.2"))
	if id, f := v.Verify(colleague, as.MintOpaque(as.Claims(alice, "c", resource+"/mem")), resource+"/mem"); f != nil || id.Subject != "alice" {
		t.Fatalf("another address's token: %v", f)
	}
}

// TestIntrospectionFloodFromManyAddressesIsCappedInFlight: many addresses
// at once, against an issuer that answers slowly; only a bounded number
// of requests wait for it, the rest are refused at once.
func TestIntrospectionFloodFromManyAddressesIsCappedInFlight(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := introspecting(t, as)
	release := as.StallIntrospection()
	defer release()
	var wg sync.WaitGroup
	var busy atomic.Int64
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := oauth.WithPeer(context.Background(), netip.AddrFrom4([4]byte{10, 0, byte(i / 256), byte(i)}))
			if _, f := v.Verify(ctx, fmt.Sprintf("made_up_%032d", i), resource+"/mem"); f != nil && f.Reason == oauth.ReasonBusy {
				busy.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for busy.Load() < 64-16 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := busy.Load(); n < 64-16 {
		t.Fatalf("%d of 64 refused while the issuer stalls; want at least 48 (16 in flight)", n)
	}
	if n := as.IntrospectionCount(); n > 16 {
		t.Fatalf("%d introspections in flight at once; want at most 16", n)
	}
	release()
	wg.Wait()
}
