package oauth_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/testoauth"
	"github.com/mcpseal/mcpseal/oauth"
)

// A groups (or roles) claim that is one string is one group name. Some
// identity providers emit a single-valued claim as a string instead of a
// one-element array (Keycloak mappers with "multivalued" off, SAML
// bridges), and group names often contain spaces ("Domain Users"). The
// verifier splits the string on whitespace, so a user in a group named
// "not admins" (or one they created themselves: GitLab, self-service
// groups) is read as a member of group "admins".
func TestGroupsStringIsSplitIntoSeveralGroups(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	v := verifier(t, as, oauth.Options{})
	c := as.Claims(testoauth.User{Subject: "mallory", Scopes: []string{"mcp:tools"}}, "cli-1", resource+"/mem")
	c["groups"] = "not admins"
	c["roles"] = "viewer-of admin"
	id, f := v.Verify(context.Background(), as.Mint(c), resource+"/mem")
	if f != nil {
		return // refusing an ambiguous string is a fix too
	}
	for _, g := range id.Groups {
		if g == "admins" {
			t.Errorf("groups %q read as %q: the string's words became group memberships", "not admins", id.Groups)
		}
	}
	for _, r := range id.Roles {
		if r == "admin" {
			t.Errorf("roles %q read as %q", "viewer-of admin", id.Roles)
		}
	}
}

// failingJWKS lets every request through to the test server except the
// key set once fail is set; it counts key-set requests.
type failingJWKS struct {
	next http.RoundTripper
	fail atomic.Bool
	jwks atomic.Int64
}

func (f *failingJWKS) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/jwks") {
		f.jwks.Add(1)
		if f.fail.Load() {
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
		}
	}
	return f.next.RoundTrip(r)
}

// While the IdP's key-set endpoint is failing (or answering with no
// usable key), every request that carries a token naming the issuer,
// signed or not, starts a background key-set fetch: the stale-set refresh
// is forced (it skips MinRefresh) and "fetched" never advances, so the
// gateway fetches per request, which the issue forbids ("keys never
// fetched per request") and which an unauthenticated caller drives.
func TestJWKSFetchedPerRequestWhileTheKeySetFails(t *testing.T) {
	t.Parallel()
	as := testoauth.New()
	defer as.Close()
	var clock atomic.Int64
	start := time.Now()
	clock.Store(start.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	tr := &failingJWKS{next: as.Client().Transport}
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	v := verifier(t, as, oauth.Options{Client: hc, Now: now, MaxAge: time.Minute, MinRefresh: 30 * time.Second})
	// No valid token is needed: a forgery naming the issuer and its key
	// id, signed by the attacker's own key, reaches the key lookup.
	other := testoauth.New()
	defer other.Close()
	otherKey, _ := other.Key()
	_, kid := as.Key()
	tok := testoauth.Sign(otherKey, kid, as.Claims(alice, "cli-1", resource+"/mem"))
	tr.fail.Store(true)
	clock.Store(start.Add(2 * time.Minute).UnixNano()) // the set is stale now
	before := tr.jwks.Load()
	for range 40 {
		v.Verify(context.Background(), tok, resource+"/mem")
		time.Sleep(5 * time.Millisecond) // let the background refresh end
	}
	time.Sleep(50 * time.Millisecond)
	if n := tr.jwks.Load() - before; n > 2 {
		t.Fatalf("40 requests within one MinRefresh fetched the failing key set %d times", n)
	}
}
