package oauth_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpseal/mcpseal/internal/testoauth"
	"github.com/mcpseal/mcpseal/oauth"
)

func introspecting(t *testing.T, as *testoauth.Server) *oauth.Verifier {
	t.Helper()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(testoauth.IntrospectSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := oauth.ParseConfig("auth.json", fmt.Appendf(nil, `{"version": 1, "resource": %q, "scopes": ["mcp:tools"],
	  "issuers": [{"issuer": %q, "introspection": {"client_id": %q, "secret_file": %q}}]}`, resource, as.Issuer, testoauth.IntrospectClient, secret))
	if err != nil {
		t.Fatal(err)
	}
	v, err := oauth.NewVerifier(context.Background(), c, oauth.Options{Client: as.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return v
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
