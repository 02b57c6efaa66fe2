package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/policy"
)

// MaxConfigFile bounds auth.json: a handful of issuers fit in a few KiB.
const MaxConfigFile = 64 << 10

// Bounds of the file's contents.
const (
	maxIssuers    = 16
	maxListItems  = 64
	maxClaimDepth = 4
	// DefaultLeeway is the clock skew allowed on exp, nbf and iat.
	DefaultLeeway = 30 * time.Second
	maxLeeway     = 5 * time.Minute
)

// fileJSON is auth.json's shape; the strict decoder walks its tags.
type fileJSON struct {
	Version  int          `json:"version"`
	Resource string       `json:"resource"`
	Scopes   []string     `json:"scopes,omitempty"`
	Issuers  []issuerJSON `json:"issuers"`
	Leeway   string       `json:"leeway,omitempty"`
	// CAFile holds extra PEM roots for reaching the issuers (a private CA).
	CAFile string `json:"ca_file,omitempty"`
}

type issuerJSON struct {
	Issuer     string      `json:"issuer"`
	Audiences  []string    `json:"audiences,omitempty"`
	Algorithms []string    `json:"algorithms,omitempty"`
	Claims     *claimsJSON `json:"claims,omitempty"`
	// Introspection turns on RFC 7662 for opaque (non-JWT) tokens.
	Introspection *introspectionJSON `json:"introspection,omitempty"`
	// RequireATJWT accepts only JWTs typed "at+jwt" (RFC 9068).
	RequireATJWT bool `json:"require_at_jwt,omitempty"`
}

type introspectionJSON struct {
	ClientID   string `json:"client_id"`
	SecretFile string `json:"secret_file,omitempty"`
	SecretEnv  string `json:"secret_env,omitempty"`
}

type claimsJSON struct {
	Subject  string `json:"subject,omitempty"`
	ClientID string `json:"client_id,omitempty"`
	Scope    string `json:"scope,omitempty"`
	Groups   string `json:"groups,omitempty"`
	Roles    string `json:"roles,omitempty"`
}

// Config is a checked auth.json.
type Config struct {
	// Resource is the gateway's public base URL (https, no query or
	// fragment, no trailing slash).
	Resource string
	// Scopes are required in every token (and advertised).
	Scopes  []string
	Issuers []Issuer
	Leeway  time.Duration
	CAFile  string
}

// Issuer is one trusted authorization server.
type Issuer struct {
	Issuer     string
	Audiences  []string
	Algorithms []jose.SignatureAlgorithm
	Claims     Claims
	// Introspection, when set, validates opaque tokens at the issuer's
	// introspection endpoint (RFC 7662) with these client credentials.
	Introspection *Introspection
	// RequireATJWT refuses every JWT whose header typ is not "at+jwt" or
	// "application/at+jwt" (RFC 9068 §2.1). Off, a JWT typed "JWT" or not
	// typed is accepted unless it looks like an ID token (see idToken).
	RequireATJWT bool
}

// Introspection is the resource server's credentials at an issuer's
// introspection endpoint: the secret is read from a file or an
// environment variable when the verifier starts, never from auth.json.
type Introspection struct {
	ClientID, SecretFile, SecretEnv string
}

// Claims names the claims an identity is read from; a dotted name reaches
// into objects ("realm_access.roles").
type Claims struct {
	Subject, ClientID, Scope, Groups, Roles string
}

// asymmetric are the algorithms a resource server may accept: every JWS
// algorithm with a public verification key. "none" and the HMAC family
// are never accepted, whatever the file says.
var asymmetric = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// defaultAlgorithms are accepted when an issuer names none.
var defaultAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.PS256, jose.ES256, jose.EdDSA}

// ReadConfig reads and checks auth.json.
func ReadConfig(path string) (*Config, error) {
	b, err := atomicfile.ReadFileFollow(path, MaxConfigFile)
	if errors.Is(err, atomicfile.ErrTooLarge) {
		return nil, fmt.Errorf("the auth file is over %d bytes", MaxConfigFile)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the auth file: %w", err)
	}
	return ParseConfig(path, b)
}

// ParseConfig checks auth.json's bytes; name is used in errors. Errors
// name keys and positions, never values.
func ParseConfig(name string, b []byte) (*Config, error) {
	var f fileJSON
	if err := policy.DecodeStrict(name, b, MaxConfigFile, &f); err != nil {
		return nil, err
	}
	bad := func(path, msg string) error { return &policy.FileError{File: name, Path: path, Msg: msg} }
	if f.Version != 1 {
		return nil, bad("version", "must be 1")
	}
	c := &Config{Resource: f.Resource, Leeway: DefaultLeeway, CAFile: f.CAFile}
	if err := checkResource(f.Resource); err != nil {
		return nil, bad("resource", err.Error())
	}
	if err := checkList(f.Scopes, scopeToken); err != nil {
		return nil, bad("scopes", err.Error())
	}
	c.Scopes = f.Scopes
	if f.Leeway != "" {
		d, err := time.ParseDuration(f.Leeway)
		if err != nil || d < 0 || d > maxLeeway {
			return nil, bad("leeway", "a duration from 0s to 5m")
		}
		c.Leeway = d
	}
	if len(f.Issuers) == 0 || len(f.Issuers) > maxIssuers {
		return nil, bad("issuers", fmt.Sprintf("1 to %d issuers", maxIssuers))
	}
	for i, is := range f.Issuers {
		p := fmt.Sprintf("issuers[%d]", i)
		if err := checkIssuer(is.Issuer); err != nil {
			return nil, bad(p+".issuer", err.Error())
		}
		for _, o := range c.Issuers {
			if o.Issuer == is.Issuer {
				return nil, bad(p+".issuer", "the same issuer twice")
			}
		}
		if err := checkList(is.Audiences, func(s string) bool { return s != "" && len(s) <= 512 && printable(s) }); err != nil {
			return nil, bad(p+".audiences", err.Error())
		}
		out := Issuer{Issuer: is.Issuer, Audiences: is.Audiences, Algorithms: defaultAlgorithms, RequireATJWT: is.RequireATJWT}
		if is.Algorithms != nil {
			out.Algorithms = nil
			if len(is.Algorithms) == 0 {
				return nil, bad(p+".algorithms", "at least one algorithm")
			}
			for _, a := range is.Algorithms {
				alg := jose.SignatureAlgorithm(a)
				if !slices.Contains(asymmetric, alg) {
					return nil, bad(p+".algorithms", "only asymmetric JWS algorithms (RS*, PS*, ES*, EdDSA); none and HS* are never accepted")
				}
				if slices.Contains(out.Algorithms, alg) {
					return nil, bad(p+".algorithms", "an algorithm twice")
				}
				out.Algorithms = append(out.Algorithms, alg)
			}
		}
		out.Claims = Claims{Subject: "sub", ClientID: "client_id", Scope: "scope", Groups: "groups", Roles: "roles"}
		if cl := is.Claims; cl != nil {
			for _, m := range []struct {
				key string
				src string
				dst *string
			}{{"subject", cl.Subject, &out.Claims.Subject}, {"client_id", cl.ClientID, &out.Claims.ClientID}, {"scope", cl.Scope, &out.Claims.Scope}, {"groups", cl.Groups, &out.Claims.Groups}, {"roles", cl.Roles, &out.Claims.Roles}} {
				if m.src == "" {
					continue
				}
				if !claimPath(m.src) {
					return nil, bad(p+".claims."+m.key, fmt.Sprintf("a claim name, or up to %d names joined by dots", maxClaimDepth))
				}
				*m.dst = m.src
			}
		}
		if in := is.Introspection; in != nil {
			at := p + ".introspection"
			switch {
			case in.ClientID == "" || !printable(in.ClientID):
				return nil, bad(at+".client_id", "a client id")
			case (in.SecretFile == "") == (in.SecretEnv == ""):
				return nil, bad(at, "exactly one of secret_file or secret_env")
			}
			for _, o := range c.Issuers {
				if o.Introspection != nil {
					return nil, bad(at, "only one issuer may introspect: an opaque token does not say whose it is")
				}
			}
			out.Introspection = &Introspection{ClientID: in.ClientID, SecretFile: in.SecretFile, SecretEnv: in.SecretEnv}
		}
		c.Issuers = append(c.Issuers, out)
	}
	return c, nil
}

// RouteResource is the resource identifier of a route.
func (c *Config) RouteResource(route string) string { return c.Resource + "/" + route }

// Authority is the host[:port] clients use to reach the gateway: the Host
// header a request must carry.
func (c *Config) Authority() string {
	u, _ := url.Parse(c.Resource)
	return u.Host
}

func checkResource(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil:
		return errors.New("an https:// URL with a host")
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "/") || strings.Contains(s, "#") || strings.Contains(s, "?"):
		return errors.New("no query, fragment or trailing slash")
	case u.Path != "":
		return errors.New("the gateway's origin only (routes are its paths)")
	}
	return nil
}

func checkIssuer(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#") {
		return errors.New("an https:// URL with no query or fragment")
	}
	return nil
}

func checkList(l []string, ok func(string) bool) error {
	if len(l) > maxListItems {
		return fmt.Errorf("at most %d entries", maxListItems)
	}
	for i, s := range l {
		if !ok(s) {
			return fmt.Errorf("entry %d is not valid", i)
		}
		if slices.Contains(l[:i], s) {
			return fmt.Errorf("entry %d repeats an earlier one", i)
		}
	}
	return nil
}

// scopeToken: RFC 6749 scope-token, %x21 / %x23-5B / %x5D-7E.
func scopeToken(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c == '"' || c == '\\' || c > 0x7e {
			return false
		}
	}
	return true
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func claimPath(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) > maxClaimDepth {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 64 || !printable(p) {
			return false
		}
	}
	return true
}
