package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Bounds of what an authorization server may send.
const (
	// maxMetadata bounds a metadata document: real ones are a few KiB.
	maxMetadata = 256 << 10
	// maxJWKS bounds a key set: a few keys in rotation are a few KiB.
	maxJWKS = 256 << 10
	// maxKeys bounds the keys kept per issuer.
	maxKeys = 32
	// fetchTimeout bounds one metadata or key-set fetch.
	fetchTimeout = 10 * time.Second
)

// Refresh bounds of a key set.
const (
	// DefaultMaxAge: a key set older than this is refreshed in the
	// background at its next use (rotation without an unknown key id).
	DefaultMaxAge = 10 * time.Minute
	// DefaultMinRefresh: an unknown key id refreshes the set at most this
	// often, so tokens with made-up key ids cannot make the gateway fetch
	// per request.
	DefaultMinRefresh = 30 * time.Second
)

// metadata is what discovery needs of an RFC 8414 / OIDC document.
type metadata struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint,omitempty"`
}

// discover fetches the issuer's metadata: RFC 8414 first (path inserted
// after /.well-known/oauth-authorization-server), then OpenID Connect
// (appended). The document must name exactly the configured issuer (RFC
// 8414 §3.3: a mix-up defence) and an https jwks_uri.
func discover(ctx context.Context, c *http.Client, issuer string) (*metadata, error) {
	u, _ := url.Parse(issuer)
	path := strings.TrimSuffix(u.Path, "/")
	urls := []string{
		u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + path,
		strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration",
	}
	var last error
	for _, mu := range urls {
		var m metadata
		if err := getJSON(ctx, c, mu, maxMetadata, &m); err != nil {
			last = err
			continue
		}
		if m.Issuer != issuer {
			return nil, errors.New("the metadata names another issuer")
		}
		if ju, err := url.Parse(m.JWKSURI); err != nil || ju.Scheme != "https" || ju.Host == "" {
			return nil, errors.New("the metadata has no https jwks_uri")
		}
		return &m, nil
	}
	return nil, fmt.Errorf("no authorization server metadata: %w", last)
}

// getJSON GETs u (no redirects, bounded) into v.
func getJSON(ctx context.Context, c *http.Client, u string, limit int64, v any) error {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return errors.New("unreachable")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return errors.New("cannot read the answer")
	}
	if int64(len(b)) > limit {
		return errors.New("the answer is too large")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errors.New("the answer is not the expected JSON")
	}
	return nil
}

// keySet is one issuer's JWKS, cached. Lookups never block on the network
// except an unknown key id, which refreshes the set at most once per
// minRefresh (other lookups meanwhile use the cache).
type keySet struct {
	url        string
	client     *http.Client
	now        func() time.Time
	maxAge     time.Duration
	minRefresh time.Duration

	fetchMu sync.Mutex // one fetch at a time
	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetched time.Time // last good fetch
	tried   time.Time // last attempt
	bg      bool      // a background refresh is running
}

// key returns the verification key for kid and alg.
func (k *keySet) key(ctx context.Context, kid string, alg jose.SignatureAlgorithm) (*jose.JSONWebKey, bool) {
	k.mu.Lock()
	found := k.find(kid, alg)
	// Stale, and not tried within minRefresh: an issuer that keeps
	// failing is asked again at that pace, not at the request rate.
	now := k.now()
	stale := now.Sub(k.fetched) > k.maxAge && now.Sub(k.tried) >= k.minRefresh && !k.bg
	if stale {
		k.bg = true
	}
	k.mu.Unlock()
	if stale {
		go func() {
			k.refresh(context.Background(), true)
			k.mu.Lock()
			k.bg = false
			k.mu.Unlock()
		}()
	}
	if found != nil {
		return found, true
	}
	if !k.refresh(ctx, false) {
		return nil, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	found = k.find(kid, alg)
	return found, found != nil
}

func (k *keySet) find(kid string, alg jose.SignatureAlgorithm) *jose.JSONWebKey {
	var only *jose.JSONWebKey
	n := 0
	for i := range k.keys {
		key := &k.keys[i]
		if key.Algorithm != "" && key.Algorithm != string(alg) {
			continue
		}
		if kid != "" && key.KeyID == kid {
			return key
		}
		n++
		only = key
	}
	// A token without a kid may use the set's only key for its algorithm.
	if kid == "" && n == 1 {
		return only
	}
	return nil
}

// refresh fetches the set unless one was tried within minRefresh (force:
// the background refresh of a stale set). It reports whether it fetched.
func (k *keySet) refresh(ctx context.Context, force bool) bool {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	k.mu.Lock()
	if !force && k.now().Sub(k.tried) < k.minRefresh {
		k.mu.Unlock()
		return false
	}
	k.tried = k.now()
	k.mu.Unlock()
	keys, err := fetchKeys(ctx, k.client, k.url)
	if err != nil {
		return false // keep the old set: a flaky IdP does not lock everyone out
	}
	k.mu.Lock()
	k.keys, k.fetched = keys, k.now()
	k.mu.Unlock()
	return true
}

// fetchKeys fetches a JWKS and keeps only public signature keys.
func fetchKeys(ctx context.Context, c *http.Client, u string) ([]jose.JSONWebKey, error) {
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := getJSON(ctx, c, u, maxJWKS, &raw); err != nil {
		return nil, err
	}
	var out []jose.JSONWebKey
	for _, r := range raw.Keys {
		var key jose.JSONWebKey
		if err := key.UnmarshalJSON(r); err != nil {
			continue // an algorithm go-jose does not know: not ours to use
		}
		if !key.Valid() || !key.IsPublic() || (key.Use != "" && key.Use != "sig") {
			continue // a private or symmetric key is never a verification key
		}
		if _, sym := key.Key.([]byte); sym {
			continue
		}
		out = append(out, key)
		if len(out) == maxKeys {
			break
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no usable keys")
	}
	return out, nil
}
