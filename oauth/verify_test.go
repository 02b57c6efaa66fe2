package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/testoauth"
	"github.com/mcpseal/mcpseal/oauth"
)

const resource = "https://gw.example.test:8443"

var alice = testoauth.User{Subject: "alice", Groups: []string{"eng"}, Scopes: []string{"mcp:tools"}}

func config(t *testing.T, issuers ...string) *oauth.Config {
	t.Helper()
	var list string
	for i, is := range issuers {
		if i > 0 {
			list += ","
		}
		list += fmt.Sprintf(`{"issuer": %q}`, is)
	}
	c, err := oauth.ParseConfig("auth.json", []byte(fmt.Sprintf(`{"version": 1, "resource": %q, "scopes": ["mcp:tools"], "issuers": [%s]}`, resource, list)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func verifier(t *testing.T, as *testoauth.Server, o oauth.Options) *oauth.Verifier {
	t.Helper()
	if o.Client == nil {
		o.Client = as.Client()
	}
	v, err := oauth.NewVerifier(context.Background(), config(t, as.Issuer), o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantRefused(t *testing.T, v *oauth.Verifier, tok, reason string, status int) {
	t.Helper()
	id, f := v.Verify(context.Background(), tok, resource+"/mem")
	if f == nil {
		t.Fatalf("token accepted as %q; want refused (%s)", id.Subject, reason)
	}
	if f.Reason != reason || f.Status != status {
		t.Fatalf("refused with %s/%d, want %s/%d", f.Reason, f.Status, reason, status)
	}
}

func TestValidTokenIsAnIdentity(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := verifier(t, as, oauth.Options{})
	c := as.Claims(alice, "cli-1", resource+"/mem")
	id, f := v.Verify(context.Background(), as.Mint(c), resource+"/mem")
	if f != nil {
		t.Fatal(f)
	}
	if id.Subject != "alice" || id.ClientID != "cli-1" || id.Groups[0] != "eng" || !id.HasScope("mcp:tools") || id.JTIDigest == "" || id.Issuer != as.Issuer {
		t.Fatalf("identity %+v", id)
	}
}

func TestTokenFromASecondIssuerIsRefused(t *testing.T) {
	t.Parallel()
	as, other := testoauth.New(), testoauth.New()
	defer as.Close()
	defer other.Close()
	v := verifier(t, as, oauth.Options{})
	// The other server's token names its own issuer...
	wantRefused(t, v, other.Mint(other.Claims(alice, "c", resource+"/mem")), oauth.ReasonIssuer, 401)
	// ...or claims to be the trusted one, signed with its own key.
	c := other.Claims(alice, "c", resource+"/mem")
	c["iss"] = as.Issuer
	wantRefused(t, v, other.Mint(c), oauth.ReasonKey, 401)
}

func TestTokenForAnotherAudienceIsRefused(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := verifier(t, as, oauth.Options{})
	wantRefused(t, v, as.Mint(as.Claims(alice, "c", "https://other.example/mcp")), oauth.ReasonAudience, 401)
	// A token for another route of the same gateway is another resource.
	wantRefused(t, v, as.Mint(as.Claims(alice, "c", resource+"/docs")), oauth.ReasonAudience, 401)
}

func TestExpiredTokenIsRefused(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := verifier(t, as, oauth.Options{})
	c := as.Claims(alice, "c", resource+"/mem")
	c["exp"] = time.Now().Add(-time.Minute).Unix()
	wantRefused(t, v, as.Mint(c), oauth.ReasonExpired, 401)
	delete(c, "exp")
	wantRefused(t, v, as.Mint(c), oauth.ReasonExpired, 401)
	c = as.Claims(alice, "c", resource+"/mem")
	c["nbf"] = time.Now().Add(5 * time.Minute).Unix()
	wantRefused(t, v, as.Mint(c), oauth.ReasonNotYet, 401)
}

func TestTokenSignedWithARotatedOutKeyIsRefused(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := verifier(t, as, oauth.Options{MinRefresh: time.Nanosecond})
	old, oldKid := as.Rotate()
	// A token of the new key makes the gateway learn the rotation.
	if _, f := v.Verify(context.Background(), as.Mint(as.Claims(alice, "c", resource+"/mem")), resource+"/mem"); f != nil {
		t.Fatalf("a token of the new key: %v", f)
	}
	wantRefused(t, v, testoauth.Sign(old, oldKid, as.Claims(alice, "c", resource+"/mem")), oauth.ReasonKey, 401)
}

func TestAlgNoneIsRefused(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := verifier(t, as, oauth.Options{})
	wantRefused(t, v, testoauth.Unsigned(as.Claims(alice, "c", resource+"/mem")), oauth.ReasonAlgorithm, 401)
}

func TestHS256WithThePublicKeyIsRefused(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := verifier(t, as, oauth.Options{})
	wantRefused(t, v, as.HS256WithPublicKey(as.Claims(alice, "c", resource+"/mem")), oauth.ReasonAlgorithm, 401)
}

func TestTokenMissingARequiredScopeIsForbidden(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := verifier(t, as, oauth.Options{})
	u := alice
	u.Scopes = []string{"other"}
	wantRefused(t, v, as.Mint(as.Claims(u, "c", resource+"/mem")), oauth.ReasonScope, 403)
}

func TestForgedKeyIDsDoNotFetchPerRequest(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := verifier(t, as, oauth.Options{MinRefresh: time.Hour})
	before := as.Fetches()
	old, _ := as.Rotate()
	for i := range 50 {
		wantRefused(t, v, testoauth.Sign(old, fmt.Sprintf("made-up-%d", i), as.Claims(alice, "c", resource+"/mem")), oauth.ReasonKey, 401)
	}
	if n := as.Fetches() - before; n > 1 {
		t.Fatalf("%d key-set fetches for 50 forged key ids; want at most 1", n)
	}
}

func TestAmbiguousClaimTypesAreRefused(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := verifier(t, as, oauth.Options{})
	c := as.Claims(alice, "c", resource+"/mem")
	c["groups"] = map[string]any{"eng": true}
	wantRefused(t, v, as.Mint(c), oauth.ReasonClaims, 401)
	c = as.Claims(alice, "c", resource+"/mem")
	c["sub"] = 7
	wantRefused(t, v, as.Mint(c), oauth.ReasonClaims, 401)
	c["sub"] = ""
	wantRefused(t, v, as.Mint(c), oauth.ReasonSubject, 401)
}

func TestBearerHeaderShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		vals   []string
		status int
	}{
		{nil, 401},
		{[]string{"Bearer a.b.c", "Bearer a.b.c"}, 400},
		{[]string{"Basic dXNlcjpwYXNz"}, 400},
		{[]string{"Bearer "}, 400},
		{[]string{"Bearer a b"}, 400},
		{[]string{"bearer a.b.c"}, 0},
	} {
		h := http.Header{"Authorization": tc.vals}
		_, f := oauth.BearerToken(h)
		got := 0
		if f != nil {
			got = f.Status
		}
		if got != tc.status {
			t.Errorf("%q: status %d, want %d", tc.vals, got, tc.status)
		}
	}
}

func TestChallengeNamesTheMetadata(t *testing.T) {
	t.Parallel()
	c := config(t, "https://idp.example.test")
	got := c.Challenge("mem", &oauth.Failure{Code: "insufficient_scope"})
	want := `Bearer resource_metadata="https://gw.example.test:8443/.well-known/oauth-protected-resource/mem", error="insufficient_scope", scope="mcp:tools"`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	m := c.Metadata("mem")
	if m.Resource != resource+"/mem" || m.AuthorizationServers[0] != "https://idp.example.test" {
		t.Fatalf("%+v", m)
	}
}

// countingTransport counts the requests a verifier makes.
type countingTransport struct {
	rt http.RoundTripper
	n  atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

func TestFailingIssuerIsNotAskedPerRequest(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ct := &countingTransport{rt: as.Client().Transport}
	v := verifier(t, as, oauth.Options{Client: &http.Client{Transport: ct}, Now: clock, MaxAge: time.Minute, MinRefresh: 10 * time.Minute})
	tok := as.Mint(as.Claims(alice, "c", resource+"/mem"))
	as.Close() // the issuer goes away
	mu.Lock()
	now = now.Add(2 * time.Minute) // the key set is stale
	mu.Unlock()
	before := ct.n.Load()
	for range 10 {
		// The last good keys still verify; the stale set is refreshed in
		// the background at most once per MinRefresh.
		if _, f := v.Verify(context.Background(), tok, resource+"/mem"); f != nil {
			t.Fatal(f)
		}
		time.Sleep(20 * time.Millisecond) // let a background refresh finish
	}
	if n := ct.n.Load() - before; n > 1 {
		t.Fatalf("%d requests to a failing issuer for 10 verifications; want at most 1", n)
	}
}

// TestTokenWithARepeatedClaimIsRefused: a payload naming "sub" twice is
// read one way here and maybe another by the next verifier in line.
func TestTokenWithARepeatedClaimIsRefused(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := verifier(t, as, oauth.Options{})
	c := as.Claims(alice, "c", resource+"/mem")
	good, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	k, kid := as.Key()
	if _, f := v.Verify(context.Background(), testoauth.SignPayload(k, kid, good), resource+"/mem"); f != nil {
		t.Fatalf("the same claims signed as bytes: %v", f)
	}
	twice := append([]byte(`{"sub":"mallory",`), good[1:]...)
	wantRefused(t, v, testoauth.SignPayload(k, kid, twice), oauth.ReasonMalformed, 401)
}
