package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/testoauth"
	"github.com/mcpseal/mcpseal/oauth"
)

// audienceVerifier trusts as with "web-app" as a configured audience: the
// setting an ID token of the client "web-app" (whose aud is "web-app")
// could ride on.
func audienceVerifier(t testing.TB, as *testoauth.Server, requireATJWT bool) *oauth.Verifier {
	t.Helper()
	return verifierFrom(t, as, fmt.Sprintf(`{"version": 1, "resource": %q, "issuers": [{"issuer": %q, "audiences": ["web-app"], "require_at_jwt": %v}]}`, resource, as.Issuer, requireATJWT))
}

// verifierFrom is a verifier of the auth.json file, reaching as.
func verifierFrom(t testing.TB, as *testoauth.Server, file string) *oauth.Verifier {
	t.Helper()
	c, err := oauth.ParseConfig("auth.json", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	v, err := oauth.NewVerifier(context.Background(), c, oauth.Options{Client: as.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestIDTokenPresentedAsAccessTokenIsRefused: a client holding its user's
// OpenID Connect ID token (aud: the client's own id, a configured
// audience here) presents it as an access token.
func TestIDTokenPresentedAsAccessTokenIsRefused(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := audienceVerifier(t, as, false)
	idToken := func(extra map[string]any) map[string]any {
		c := as.Claims(alice, "", "web-app")
		delete(c, "client_id")
		c["azp"] = "web-app"
		for k, x := range extra {
			c[k] = x
		}
		return c
	}
	for _, tc := range []struct {
		name   string
		claims map[string]any
		typ    string
	}{
		{"nonce", idToken(map[string]any{"nonce": "n-0S6_WzA2Mj"}), "JWT"},
		{"at_hash", idToken(map[string]any{"at_hash": "77QmUPtjPfzWtF2AnpK9RQ"}), "JWT"},
		{"c_hash", idToken(map[string]any{"c_hash": "LDktKdoQak3Pk0cnXxCltA"}), ""},
		{"aud is the azp", idToken(nil), "JWT"},
		{"aud is the client_id", func() map[string]any { c := idToken(nil); delete(c, "azp"); c["client_id"] = "web-app"; return c }(), ""},
		{"typed id_token+jwt", as.Claims(alice, "cli-1", resource+"/mem"), "id_token+jwt"},
		{"typed logout+jwt", as.Claims(alice, "cli-1", resource+"/mem"), "logout+jwt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRefused(t, v, as.MintTyped(tc.claims, tc.typ), oauth.ReasonTokenType, http.StatusUnauthorized)
		})
	}
}

// TestAccessTokenTypesAreAccepted: the typed access tokens of RFC 9068,
// and an identity provider's "JWT"-typed or untyped access token for this
// resource, still verify; with require_at_jwt only the typed ones do.
func TestAccessTokenTypesAreAccepted(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	lax, strict := audienceVerifier(t, as, false), audienceVerifier(t, as, true)
	for _, tc := range []struct {
		typ      string
		aud      string
		strictOK bool
	}{
		{"at+jwt", resource + "/mem", true},
		{"application/at+jwt", resource + "/mem", true},
		{"AT+JWT", "web-app", true},
		{"JWT", resource + "/mem", false},
		{"", resource + "/mem", false},
		{"JWT", "web-app", false}, // a configured audience that is not the client
	} {
		c := as.Claims(alice, "cli-1", tc.aud)
		c["azp"] = "cli-1"
		tok := as.MintTyped(c, tc.typ)
		if _, f := lax.Verify(context.Background(), tok, resource+"/mem"); f != nil {
			t.Errorf("typ %q aud %q refused: %v", tc.typ, tc.aud, f)
		}
		_, f := strict.Verify(context.Background(), tok, resource+"/mem")
		if (f == nil) != tc.strictOK || f != nil && f.Reason != oauth.ReasonTokenType {
			t.Errorf("require_at_jwt, typ %q: got %v, want accepted=%v", tc.typ, f, tc.strictOK)
		}
	}
}

// FuzzAccessTokenType: any claims under any typ, signed by the trusted
// issuer. Verify must not panic, and a token it accepts that is not typed
// at+jwt carries none of the ID-token-only claims.
func FuzzAccessTokenType(f *testing.F) {
	as := testoauth.New()
	defer as.Close()
	v := audienceVerifier(f, as, false)
	base := fmt.Sprintf(`{"iss":%q,"sub":"alice","exp":%d,`, as.Issuer, time.Now().Add(time.Hour).Unix())
	for _, s := range []struct{ claims, typ string }{
		{`"aud":"web-app","azp":"web-app"}`, "JWT"},
		{`"aud":"web-app","nonce":"n"}`, ""},
		{`"aud":"` + resource + `/mem","azp":"c"}`, "at+jwt"},
		{`"aud":["web-app","x"],"client_id":"x"}`, "application/jwt"},
		{`"aud":"web-app","at_hash":1}`, "id_token+jwt"},
	} {
		f.Add(s.claims, s.typ)
	}
	f.Fuzz(func(t *testing.T, claims, typ string) {
		var m map[string]any
		if json.Unmarshal([]byte(base+claims), &m) != nil {
			return
		}
		id, fail := v.Verify(context.Background(), as.MintTyped(m, typ), resource+"/mem")
		if fail != nil || id == nil {
			return
		}
		if t := strings.ToLower(typ); t == "at+jwt" || t == "application/at+jwt" {
			return
		}
		for _, k := range []string{"nonce", "at_hash", "c_hash", "s_hash"} {
			if _, ok := m[k]; ok {
				t.Fatalf("a token typed %q with %s was accepted", typ, k)
			}
		}
	})
}
