package oauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// MaxToken bounds a bearer token: real access tokens are 1–4 KiB; 16 KiB
// leaves room for large group claims and refuses anything built to burn
// CPU in the base64 and JSON decoders.
const MaxToken = 16 << 10

// Failure reasons. Stable strings, logged and audited; never a value.
const (
	ReasonNoToken    = "no-token"             // no Authorization header
	ReasonMalformed  = "malformed"            // not "Bearer" + one compact JWS
	ReasonAlgorithm  = "algorithm"            // an algorithm the issuer does not allow (none, HS*)
	ReasonIssuer     = "issuer"               // no or an unconfigured iss
	ReasonKey        = "key"                  // no key of the issuer's set verifies it
	ReasonSignature  = "signature"            // the signature does not verify
	ReasonAudience   = "audience"             // aud does not name this resource
	ReasonExpired    = "expired"              // exp missing or past
	ReasonNotYet     = "not-yet"              // nbf or iat in the future
	ReasonSubject    = "subject"              // no sub
	ReasonClaims     = "claims"               // a mapped claim of the wrong type
	ReasonScope      = "scope"                // a required scope is missing (403)
	ReasonInactive   = "inactive"             // introspection: the token is not active
	ReasonIntrospect = "introspection-failed" // introspection: the issuer could not be asked
	ReasonTokenType  = "token-type"           // not an access token: an ID token, or another typ
	ReasonBusy       = "introspection-busy"   // introspection: too many unknown tokens at once
)

// Failure is a refused token: the HTTP status (401 or 403), the OAuth
// error code for WWW-Authenticate ("" for a request with no token, as RFC
// 6750 §3.1 asks), and mcpseal's reason.
type Failure struct {
	Status int
	Code   string // "", "invalid_request", "invalid_token" or "insufficient_scope"
	Reason string
}

func (f *Failure) Error() string { return "oauth: token refused: " + f.Reason }

func invalid(reason string) *Failure {
	return &Failure{Status: http.StatusUnauthorized, Code: "invalid_token", Reason: reason}
}

// Options are the verifier's side effects and tuning; zero values take
// the defaults.
type Options struct {
	// Client reaches the issuers; nil builds one from the config's CA file
	// and the system roots (no proxy, no redirects, TLS 1.2+).
	Client     *http.Client
	Now        func() time.Time
	MaxAge     time.Duration
	MinRefresh time.Duration
	// Getenv reads an introspection secret_env (nil: no environment).
	Getenv func(string) string
}

// Verifier validates access tokens for the gateway's routes.
type Verifier struct {
	cfg     *Config
	now     func() time.Time
	issuers map[string]*issuerState
	algs    []jose.SignatureAlgorithm // union, for parsing
	intro   *introspector             // opaque tokens; nil when off
}

type issuerState struct {
	Issuer
	meta *metadata
	keys *keySet
}

// NewVerifier discovers every issuer's metadata and loads its keys. An
// issuer that cannot be reached is an error: the gateway does not start
// with an authorization server it cannot check tokens of.
func NewVerifier(ctx context.Context, cfg *Config, o Options) (*Verifier, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.MinRefresh <= 0 {
		o.MinRefresh = DefaultMinRefresh
	}
	if o.Client == nil {
		c, err := issuerClient(cfg.CAFile)
		if err != nil {
			return nil, err
		}
		o.Client = c
	}
	v := &Verifier{cfg: cfg, now: o.Now, issuers: make(map[string]*issuerState)}
	for _, is := range cfg.Issuers {
		m, err := discover(ctx, o.Client, is.Issuer)
		if err != nil {
			return nil, fmt.Errorf("issuer %d: %w", len(v.issuers), err)
		}
		ks := &keySet{url: m.JWKSURI, client: o.Client, now: o.Now, maxAge: o.MaxAge, minRefresh: o.MinRefresh}
		if !ks.refresh(ctx, true) {
			return nil, fmt.Errorf("issuer %d: cannot load its key set", len(v.issuers))
		}
		st := &issuerState{Issuer: is, meta: m, keys: ks}
		v.issuers[is.Issuer] = st
		if is.Introspection != nil {
			in, err := newIntrospector(st, o)
			if err != nil {
				return nil, fmt.Errorf("issuer %d: %w", len(v.issuers)-1, err)
			}
			v.intro = in
		}
		for _, a := range is.Algorithms {
			if !slices.Contains(v.algs, a) {
				v.algs = append(v.algs, a)
			}
		}
	}
	return v, nil
}

// Config returns the verifier's configuration.
func (v *Verifier) Config() *Config { return v.cfg }

// issuerClient reaches authorization servers: TLS 1.2+, the system roots
// plus caFile, no proxy from the environment, no redirects, no cookies.
func issuerClient(caFile string) (*http.Client, error) {
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, errors.New("cannot read ca_file")
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, errors.New("ca_file holds no PEM certificate")
		}
	}
	return &http.Client{
		Transport: &http.Transport{
			TLSClientConfig:        &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
			ResponseHeaderTimeout:  fetchTimeout,
			MaxResponseHeaderBytes: 64 << 10,
		},
		Timeout:       fetchTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// BearerToken returns the token of the request's one Authorization header
// ("Bearer" in any case, RFC 6750 §2.1). ok is false for no header; a
// header that is not exactly one bearer token is a *Failure.
func BearerToken(h http.Header) (string, *Failure) {
	vals := h.Values("Authorization")
	if len(vals) == 0 {
		return "", &Failure{Status: http.StatusUnauthorized, Reason: ReasonNoToken}
	}
	if len(vals) != 1 || len(vals[0]) > MaxToken+len("Bearer ") {
		return "", &Failure{Status: http.StatusBadRequest, Code: "invalid_request", Reason: ReasonMalformed}
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || !b64token(tok) {
		return "", &Failure{Status: http.StatusBadRequest, Code: "invalid_request", Reason: ReasonMalformed}
	}
	return tok, nil
}

// b64token: RFC 6750's token68 alphabet.
func b64token(s string) bool {
	i := len(s)
	for i > 0 && s[i-1] == '=' {
		i--
	}
	if i == 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := s[j]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// Authenticate checks the request's bearer token for route.
func (v *Verifier) Authenticate(ctx context.Context, h http.Header, route string) (*Identity, *Failure) {
	tok, f := BearerToken(h)
	if f != nil {
		return nil, f
	}
	return v.Verify(ctx, tok, v.cfg.RouteResource(route))
}

// Verify validates one compact JWS access token for resource.
func (v *Verifier) Verify(ctx context.Context, token, resource string) (*Identity, *Failure) {
	if len(token) > MaxToken {
		return nil, invalid(ReasonMalformed)
	}
	if strings.Count(token, ".") != 2 {
		if v.intro != nil {
			return v.intro.verify(ctx, v, token, resource)
		}
		return nil, invalid(ReasonMalformed)
	}
	if !uniqueMembers(token) {
		return nil, invalid(ReasonMalformed)
	}
	parsed, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		if strings.Contains(err.Error(), "algorithm") {
			return nil, invalid(ReasonAlgorithm)
		}
		return nil, invalid(ReasonMalformed)
	}
	if len(parsed.Headers) != 1 {
		return nil, invalid(ReasonMalformed)
	}
	hdr := parsed.Headers[0]
	// The issuer picks the key set; it is read before the signature is
	// checked, and only ever selects among configured issuers.
	var unverified struct {
		Issuer string `json:"iss"`
	}
	if err := parsed.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return nil, invalid(ReasonMalformed)
	}
	is := v.issuers[unverified.Issuer]
	if is == nil {
		return nil, invalid(ReasonIssuer)
	}
	alg := jose.SignatureAlgorithm(hdr.Algorithm)
	if !slices.Contains(is.Algorithms, alg) {
		return nil, invalid(ReasonAlgorithm)
	}
	key, ok := is.keys.key(ctx, hdr.KeyID, alg)
	if !ok {
		return nil, invalid(ReasonKey)
	}
	var std jwt.Claims
	var all map[string]json.RawMessage
	if err := parsed.Claims(key.Key, &all); err != nil {
		return nil, invalid(ReasonSignature)
	}
	// Verified now; a registered claim of the wrong type is ambiguous.
	if err := parsed.UnsafeClaimsWithoutVerification(&std); err != nil {
		return nil, invalid(ReasonClaims)
	}
	if !accessToken(is, hdr.ExtraHeaders[jose.HeaderType], std, all, resource) {
		return nil, invalid(ReasonTokenType)
	}
	return v.check(is, std, all, resource)
}

// idTokenClaims are claims only an OpenID Connect ID token carries (OIDC
// Core §2, §3.1.3.6, §3.3.2.11): an access token has no use for them.
var idTokenClaims = []string{"nonce", "at_hash", "c_hash", "s_hash"}

// accessToken reports whether a verified JWT is an access token and not
// an OpenID Connect ID token (or another JWT the issuer signs): an ID
// token's aud is the client, and a client that has one for its user must
// not be able to present it here as an access token.
//
// A typ of "at+jwt" or "application/at+jwt" (RFC 9068 §2.1, any case) is
// an access token. Any other typ ("id_token+jwt", "logout+jwt",
// "secevent+jwt", a non-string) is not. A typ of "JWT" or none is what
// most identity providers put on both their access tokens and their ID
// tokens: unless the issuer's require_at_jwt is set it is taken as an
// access token only when it carries no ID-token-only claim and its
// audience is not merely the client it was issued to.
func accessToken(is *issuerState, typ any, std jwt.Claims, all map[string]json.RawMessage, resource string) bool {
	t, isString := typ.(string)
	if typ != nil && !isString {
		return false
	}
	t = strings.ToLower(t)
	switch {
	case t == "at+jwt" || t == "application/at+jwt":
		return true
	case is.RequireATJWT, typ != nil && t != "jwt" && t != "application/jwt":
		return false
	}
	for _, c := range idTokenClaims {
		if _, ok := all[c]; ok {
			return false
		}
	}
	if slices.Contains(std.Audience, resource) {
		return true
	}
	// The audience matched (if at all) through the issuer's configured
	// audiences: an ID token's aud is its client's id, so an audience that
	// is also the token's azp or client id names the client, not this
	// resource.
	for _, c := range []string{"azp", "client_id"} {
		var s string
		if raw, ok := all[c]; ok && json.Unmarshal(raw, &s) == nil && s != "" && slices.Contains(std.Audience, s) {
			return false
		}
	}
	return true
}

// check applies the claim rules to a verified token's claims (a JWT's, or
// an introspection answer's).
func (v *Verifier) check(is *issuerState, std jwt.Claims, all map[string]json.RawMessage, resource string) (*Identity, *Failure) {
	if std.Issuer != is.Issuer.Issuer {
		return nil, invalid(ReasonIssuer)
	}
	if !audienceOK(std.Audience, resource, is.Audiences) {
		return nil, invalid(ReasonAudience)
	}
	now := v.now()
	lw := v.cfg.Leeway
	if std.Expiry == nil || now.After(std.Expiry.Time().Add(lw)) {
		return nil, invalid(ReasonExpired)
	}
	if (std.NotBefore != nil && now.Add(lw).Before(std.NotBefore.Time())) ||
		(std.IssuedAt != nil && now.Add(lw).Before(std.IssuedAt.Time())) {
		return nil, invalid(ReasonNotYet)
	}
	id := &Identity{Issuer: is.Issuer.Issuer, Expiry: std.Expiry.Time(), JTIDigest: digest(std.ID)}
	var bad bool
	if id.Subject, bad = claimString(all, is.Claims.Subject); bad || id.Subject == "" {
		return nil, invalid(ReasonSubject)
	}
	if id.ClientID, bad = claimString(all, is.Claims.ClientID); bad {
		return nil, invalid(ReasonClaims)
	}
	if id.ClientID == "" && is.Claims.ClientID == "client_id" {
		if id.ClientID, bad = claimString(all, "azp"); bad {
			return nil, invalid(ReasonClaims)
		}
	}
	if id.Scopes, bad = claimList(all, is.Claims.Scope, true); bad {
		return nil, invalid(ReasonClaims)
	}
	if id.Scopes == nil && is.Claims.Scope == "scope" {
		if id.Scopes, bad = claimList(all, "scp", true); bad {
			return nil, invalid(ReasonClaims)
		}
	}
	if id.Groups, bad = claimList(all, is.Claims.Groups, false); bad {
		return nil, invalid(ReasonClaims)
	}
	if id.Roles, bad = claimList(all, is.Claims.Roles, false); bad {
		return nil, invalid(ReasonClaims)
	}
	for _, s := range v.cfg.Scopes {
		if !id.HasScope(s) {
			return id, &Failure{Status: http.StatusForbidden, Code: "insufficient_scope", Reason: ReasonScope}
		}
	}
	return id, nil
}

// audienceOK: aud names resource (RFC 8707) or one of extra.
func audienceOK(aud jwt.Audience, resource string, extra []string) bool {
	for _, a := range aud {
		if a == resource || slices.Contains(extra, a) {
			return true
		}
	}
	return false
}

// maxClaimItems bounds a list claim (groups, roles, scopes).
const maxClaimItems = 256

// claim finds a dotted claim path in the token's claims.
func claim(all map[string]json.RawMessage, path string) (json.RawMessage, bool) {
	parts := strings.Split(path, ".")
	cur := all
	for i, p := range parts {
		raw, ok := cur[p]
		if !ok {
			return nil, false
		}
		if i == len(parts)-1 {
			return raw, true
		}
		cur = nil
		if json.Unmarshal(raw, &cur) != nil || cur == nil {
			return nil, false
		}
	}
	return nil, false
}

// claimString reads a string claim; bad is true for a present claim of
// another type (ambiguous input is refused, not read as absent).
func claimString(all map[string]json.RawMessage, path string) (string, bool) {
	raw, ok := claim(all, path)
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || len(s) > 1024 {
		return "", true
	}
	return s, false
}

// uniqueMembers reports whether a compact JWS's header and payload are
// JSON with no member name repeated at any depth: a claim sent twice is
// read first-wins by one verifier and last-wins by another ("sub", "aud",
// "groups"), so it is ambiguous, and refused.
func uniqueMembers(token string) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts[:2] {
		b, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil || jsonrpc.CheckUnique(b) != nil {
			return false
		}
	}
	return true
}

// claimList reads a list claim: an array of strings, or one string. A
// string is one value, except for a scope claim (spaced): the RFC 8693
// form, values separated by spaces (U+0020 only). A group or role name
// may hold a space; splitting "not admins" would make its holder one of
// the admins.
func claimList(all map[string]json.RawMessage, path string, spaced bool) ([]string, bool) {
	raw, ok := claim(all, path)
	if !ok {
		return nil, false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if !spaced {
			return []string{s}, len(s) > 1024
		}
		var l []string
		for _, v := range strings.Split(s, " ") {
			if v != "" {
				l = append(l, v)
			}
		}
		return l, len(l) > maxClaimItems
	}
	var l []string
	if json.Unmarshal(raw, &l) != nil || len(l) > maxClaimItems {
		return nil, true
	}
	for _, x := range l {
		if len(x) > 1024 {
			return nil, true
		}
	}
	return l, false
}
