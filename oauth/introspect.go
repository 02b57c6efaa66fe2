package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// Bounds of introspection (RFC 7662).
const (
	// maxIntrospection bounds an answer: a few claims, a few KiB.
	maxIntrospection = 64 << 10
	// maxSecret bounds the secret file.
	maxSecret = 4 << 10
	// maxCached bounds the cache of answers.
	maxCached = 16384
	// cacheTTL bounds how long an active answer is trusted, whatever the
	// token's exp: a revoked token stops working within it.
	cacheTTL = 2 * time.Minute
	// negativeTTL: an inactive token is not asked about again for this
	// long (a client retrying a bad token does not hammer the issuer).
	negativeTTL = 30 * time.Second
)

// introspector validates opaque tokens at one issuer's introspection
// endpoint. Answers are cached by the token's SHA-256 (never the token),
// an active one until the earlier of its exp and cacheTTL.
type introspector struct {
	is       *issuerState
	endpoint string
	clientID string
	secret   string
	client   *http.Client
	now      func() time.Time
	budget   *budget

	mu    sync.Mutex
	cache map[[32]byte]answer
}

type answer struct {
	id    *Identity
	fail  *Failure
	until time.Time
}

func newIntrospector(is *issuerState, o Options) (*introspector, error) {
	u, err := url.Parse(is.meta.IntrospectionEndpoint)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, errors.New("introspection is configured but the metadata names no https introspection_endpoint")
	}
	in := is.Introspection
	var secret string
	if in.SecretFile != "" {
		f, err := os.Open(in.SecretFile)
		if err != nil {
			return nil, errors.New("cannot read the introspection secret_file")
		}
		b, err := io.ReadAll(io.LimitReader(f, maxSecret+1))
		f.Close()
		if err != nil || len(b) > maxSecret {
			return nil, errors.New("cannot read the introspection secret_file")
		}
		secret = strings.TrimRight(string(b), "\r\n")
	} else if o.Getenv != nil {
		secret = o.Getenv(in.SecretEnv)
	}
	if secret == "" || !printable(secret) {
		return nil, errors.New("the introspection secret is empty or not one line of printable ASCII")
	}
	return &introspector{is: is, endpoint: u.String(), clientID: in.ClientID, secret: secret, client: o.Client, now: o.Now, budget: newBudget(o.Now), cache: make(map[[32]byte]answer)}, nil
}

func (in *introspector) verify(ctx context.Context, v *Verifier, token, resource string) (*Identity, *Failure) {
	if !b64token(token) {
		return nil, invalid(ReasonMalformed)
	}
	// The cache key binds the resource too: the same token checked for
	// another route is checked afresh.
	key := sha256.Sum256([]byte(resource + "\x00" + token))
	now := in.now()
	in.mu.Lock()
	a, ok := in.cache[key]
	in.mu.Unlock()
	if ok && now.Before(a.until) {
		return a.id, a.fail
	}
	done, ok := in.budget.take(peerOf(ctx))
	if !ok {
		return nil, busy()
	}
	id, f, until := in.ask(ctx, v, token, resource, now)
	done()
	if !until.IsZero() {
		in.mu.Lock()
		if len(in.cache) >= maxCached {
			for k, old := range in.cache {
				if !now.Before(old.until) || len(in.cache) >= maxCached {
					delete(in.cache, k)
				}
				if len(in.cache) < maxCached/2 {
					break
				}
			}
		}
		in.cache[key] = answer{id: id, fail: f, until: until}
		in.mu.Unlock()
	}
	return id, f
}

// ask POSTs the token to the endpoint and checks the answer as a JWT's
// claims are checked. until is how long the answer may be cached (zero:
// not at all, the issuer could not be asked).
func (in *introspector) ask(ctx context.Context, v *Verifier, token, resource string, now time.Time) (*Identity, *Failure, time.Time) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, invalid(ReasonIntrospect), time.Time{}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.clientID), url.QueryEscape(in.secret))
	resp, err := in.client.Do(req)
	if err != nil {
		return nil, invalid(ReasonIntrospect), time.Time{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxIntrospection+1))
	if err != nil || resp.StatusCode != http.StatusOK || len(b) > maxIntrospection {
		return nil, invalid(ReasonIntrospect), time.Time{}
	}
	var all map[string]json.RawMessage
	var std jwt.Claims
	var active struct {
		Active *bool `json:"active"`
	}
	if json.Unmarshal(b, &all) != nil || json.Unmarshal(b, &active) != nil || active.Active == nil {
		return nil, invalid(ReasonIntrospect), time.Time{}
	}
	if !*active.Active {
		return nil, invalid(ReasonInactive), now.Add(negativeTTL)
	}
	if json.Unmarshal(b, &std) != nil {
		return nil, invalid(ReasonClaims), now.Add(negativeTTL)
	}
	if _, ok := all["iss"]; !ok {
		std.Issuer = in.is.Issuer.Issuer // RFC 7662 makes iss optional; the endpoint is the issuer's
	}
	id, f := v.check(in.is, std, all, resource)
	if f != nil && f.Status != http.StatusForbidden {
		return nil, f, now.Add(negativeTTL)
	}
	until := now.Add(cacheTTL)
	if id.Expiry.Before(until) {
		until = id.Expiry
	}
	return id, f, until
}
