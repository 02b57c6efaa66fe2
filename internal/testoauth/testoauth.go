// Package testoauth is a test authorization server: RFC 8414 metadata, a
// JWKS with key rotation, and a token endpoint for authorization code with
// PKCE (S256) and client credentials, on an httptest TLS server. Tests use
// it as the real peer of the gateway's resource server, and mint the
// malformed and hostile tokens (alg none, HS256 keyed with the public key,
// a rotated-out key) a real IdP would never issue. Test use only.
package testoauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// User is who a client's tokens speak for.
type User struct {
	Subject string
	Groups  []string
	Scopes  []string
}

// Client is a registered client. A public client (no Secret) uses the
// authorization code grant with PKCE; a confidential one may use client
// credentials.
type Client struct {
	ID, Secret string
	User       User
}

// Server is the test authorization server.
type Server struct {
	*httptest.Server
	Issuer string

	mu      sync.Mutex
	keys    []*ecdsa.PrivateKey // newest last; the JWKS publishes keys[len-1] and, until Rotate drops it, the one before
	kids    []string
	clients map[string]Client
	codes   map[string]codeGrant
	// TTL is the lifetime of issued tokens.
	TTL time.Duration
	// JWKSFetches counts key-set fetches.
	JWKSFetches int
	// opaque holds the claims of opaque tokens, for introspection;
	// Introspections counts the introspection requests.
	opaque         map[string]map[string]any
	Introspections int
	// stall, when set, holds every introspection answer until it closes.
	stall chan struct{}
}

// StallIntrospection holds introspection answers until release is called:
// a slow or overloaded issuer.
func (s *Server) StallIntrospection() (release func()) {
	c := make(chan struct{})
	s.mu.Lock()
	s.stall = c
	s.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(c) }) }
}

// IntrospectionCount is Introspections, read under the server's lock.
func (s *Server) IntrospectionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Introspections
}

// The resource server's credentials at the introspection endpoint.
const (
	IntrospectClient = "mcpseal-gateway"
	IntrospectSecret = "introspection-secret"
)

type codeGrant struct {
	client, redirect, challenge, resource string
}

// New starts a server on TLS.
func New() *Server {
	s := &Server{clients: map[string]Client{}, codes: map[string]codeGrant{}, opaque: map[string]map[string]any{}, TTL: 10 * time.Minute}
	s.addKey()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("GET /jwks", s.jwks)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /introspect", s.introspect)
	s.Server = httptest.NewTLSServer(mux)
	s.Issuer = s.URL
	return s
}

// CAPEM returns the server's certificate as PEM (an auth.json ca_file).
func (s *Server) CAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// Register adds a client.
func (s *Server) Register(c Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[c.ID] = c
}

func (s *Server) addKey() {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	s.keys = append(s.keys, k)
	s.kids = append(s.kids, hex.EncodeToString(b[:]))
}

// Rotate publishes a new signing key and drops the old one from the JWKS.
// It returns the old key and its kid, to mint tokens that must now fail.
func (s *Server) Rotate() (old *ecdsa.PrivateKey, oldKid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, oldKid = s.keys[len(s.keys)-1], s.kids[len(s.kids)-1]
	s.addKey()
	s.keys, s.kids = s.keys[len(s.keys)-1:], s.kids[len(s.kids)-1:]
	return old, oldKid
}

// Key returns the current signing key and its kid.
func (s *Server) Key() (*ecdsa.PrivateKey, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[len(s.keys)-1], s.kids[len(s.kids)-1]
}

// Claims returns the claims of a fresh token for u and audience.
func (s *Server) Claims(u User, clientID, audience string) map[string]any {
	now := time.Now()
	var j [8]byte
	_, _ = rand.Read(j[:])
	c := map[string]any{
		"iss": s.Issuer, "sub": u.Subject, "aud": audience, "client_id": clientID,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(s.TTL).Unix(),
		"jti": hex.EncodeToString(j[:]), "scope": strings.Join(u.Scopes, " "),
	}
	if u.Groups != nil {
		c["groups"] = u.Groups
	}
	return c
}

// Sign signs claims with key (ES256) under kid.
func Sign(key *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	return sign(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", kid), claims)
}

func sign(k jose.SigningKey, o *jose.SignerOptions, claims map[string]any) string {
	sig, err := jose.NewSigner(k, o)
	if err != nil {
		panic(err)
	}
	tok, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		panic(err)
	}
	return tok
}

// SignPayload signs payload bytes exactly as given (ES256, under kid):
// for tokens no claims map can express, such as a repeated claim.
func SignPayload(key *ecdsa.PrivateKey, kid string, payload []byte) string {
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", kid))
	if err != nil {
		panic(err)
	}
	obj, err := sig.Sign(payload)
	if err != nil {
		panic(err)
	}
	tok, err := obj.CompactSerialize()
	if err != nil {
		panic(err)
	}
	return tok
}

// Mint signs claims with the current key.
func (s *Server) Mint(claims map[string]any) string {
	k, kid := s.Key()
	return Sign(k, kid, claims)
}

// MintTyped signs claims with the current key under the JWS header typ
// ("" for none): an OpenID Connect ID token ("JWT"), or an access token of
// an identity provider that does not use RFC 9068's "at+jwt".
func (s *Server) MintTyped(claims map[string]any, typ string) string {
	k, kid := s.Key()
	o := (&jose.SignerOptions{}).WithHeader("kid", kid)
	if typ != "" {
		o = o.WithType(jose.ContentType(typ))
	}
	return sign(jose.SigningKey{Algorithm: jose.ES256, Key: k}, o, claims)
}

// Unsigned builds an "alg": "none" token, which no library signs.
func Unsigned(claims map[string]any) string {
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	p, _ := json.Marshal(claims)
	return b64(h) + "." + b64(p) + "."
}

// HS256WithPublicKey builds the key-confusion token: HMAC-SHA256 keyed with
// the issuer's public key bytes, as a verifier that trusts the header's
// alg would check it.
func (s *Server) HS256WithPublicKey(claims map[string]any) string {
	k, kid := s.Key()
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		panic(err)
	}
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	return sign(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, (&jose.SignerOptions{}).WithHeader("kid", kid), claims)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                s.Issuer,
		"authorization_endpoint":                s.URL + "/authorize",
		"token_endpoint":                        s.URL + "/token",
		"jwks_uri":                              s.URL + "/jwks",
		"introspection_endpoint":                s.URL + "/introspect",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "client_credentials"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
	})
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.JWKSFetches++
	var set jose.JSONWebKeySet
	for i, k := range s.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: s.kids[i], Algorithm: string(jose.ES256), Use: "sig"})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, set)
}

// Fetches returns how often the JWKS was fetched.
func (s *Server) Fetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.JWKSFetches
}

// authorize approves at once, as the client's user: the code comes back on
// the redirect, bound to the PKCE challenge, the redirect URI and the
// resource.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	c, ok := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	if !ok || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Scheme == "" {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	code := hex.EncodeToString(b[:])
	s.mu.Lock()
	s.codes[code] = codeGrant{client: c.ID, redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource")}
	s.mu.Unlock()
	rq := redirect.Query()
	rq.Set("code", code)
	if st := q.Get("state"); st != "" {
		rq.Set("state", st)
	}
	redirect.RawQuery = rq.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, "invalid_request")
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	c, ok := s.clients[id]
	s.mu.Unlock()
	if !ok || c.Secret != secret {
		oauthError(w, "invalid_client")
		return
	}
	resource := r.PostForm.Get("resource")
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		s.mu.Lock()
		g, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		s.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.client != c.ID || g.redirect != r.PostForm.Get("redirect_uri") || b64(sum[:]) != g.challenge {
			oauthError(w, "invalid_grant")
			return
		}
		if resource == "" {
			resource = g.resource
		}
	case "client_credentials":
		if c.Secret == "" {
			oauthError(w, "unauthorized_client")
			return
		}
	default:
		oauthError(w, "unsupported_grant_type")
		return
	}
	if resource == "" {
		oauthError(w, "invalid_target")
		return
	}
	tok := s.Mint(s.Claims(c.User, c.ID, resource))
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(s.TTL.Seconds()), "scope": strings.Join(c.User.Scopes, " ")})
}

func oauthError(w http.ResponseWriter, code string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint("testoauth: ", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// CodeHandler is the go-sdk client's own OAuth support (authorization code
// with PKCE, a pre-registered public client) for clientID against this
// server. The "browser" is hc: it opens the authorization URL, which this
// server approves at once, and reads the code off the redirect. hc must
// trust this server and the gateway.
func (s *Server) CodeHandler(clientID string, hc *http.Client) (*auth.AuthorizationCodeHandler, error) {
	noFollow := *hc
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: clientID},
		RedirectURL:         "http://127.0.0.1:1/callback",
		Client:              hc,
		AuthorizationCodeFetcher: func(ctx context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			resp, err := noFollow.Get(a.URL)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || loc.Query().Get("code") == "" {
				return nil, errors.New("testoauth: no code on the redirect")
			}
			return &auth.AuthorizationResult{Code: loc.Query().Get("code"), State: loc.Query().Get("state")}, nil
		},
	})
}

// MintOpaque issues an opaque token whose claims only introspection tells.
func (s *Server) MintOpaque(claims map[string]any) string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	tok := "opaque_" + hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opaque[tok] = claims
	return tok
}

// Revoke makes an opaque token inactive.
func (s *Server) Revoke(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.opaque, tok)
}

// introspect answers RFC 7662 requests of the resource server.
func (s *Server) introspect(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok || id != IntrospectClient || secret != IntrospectSecret || r.ParseForm() != nil {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	s.Introspections++
	c, found := s.opaque[r.PostForm.Get("token")]
	stall := s.stall
	s.mu.Unlock()
	if stall != nil {
		<-stall
	}
	if !found {
		writeJSON(w, http.StatusOK, map[string]any{"active": false})
		return
	}
	out := map[string]any{"active": true}
	for k, v := range c {
		out[k] = v
	}
	writeJSON(w, http.StatusOK, out)
}
