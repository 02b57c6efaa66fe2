// Package oauth makes the HTTP gateway an OAuth 2.1 resource server, as
// the MCP authorization specification (2025-06-18 and later) asks: it reads
// the host's auth.json, discovers each trusted authorization server's keys
// (RFC 8414, else OpenID Connect discovery), validates bearer access tokens
// (JWT, RFC 9068) against them, and describes the protected resource to
// clients (RFC 9728 metadata and the WWW-Authenticate challenge).
//
// # auth.json
//
// One JSON file owned by the host, decoded as strictly as the policy file
// (unknown or repeated keys, null and wrong types are errors with line,
// column and key path):
//
//	{
//	  "version": 1,
//	  "resource": "https://mcp.example.com:8443",
//	  "scopes": ["mcp:tools"],
//	  "issuers": [
//	    {"issuer": "https://idp.example.com/realms/team",
//	     "audiences": ["mcpseal-gateway"],
//	     "algorithms": ["RS256", "ES256"],
//	     "claims": {"groups": "groups", "roles": "realm_access.roles"}}
//	  ]
//	}
//
// Each route's resource identifier is resource + "/" + route name. A token
// is accepted for a route only when its aud names that identifier (RFC
// 8707 audience binding) or one of its issuer's "audiences".
//
// # What a token must be
//
// A compact JWS signed with an asymmetric algorithm the issuer allows (no
// "none", no HMAC: a public key is never a shared secret), by a key of that
// issuer's JWKS (cached; refreshed in the background and on an unknown key
// id at most once per MinRefresh, never per request), with iss exactly one
// configured issuer, exp present and in the future, nbf and iat not in the
// future (Leeway, default 30 s, at most 5 min), a non-empty subject, and
// every required scope. Failures carry a stable Reason and never a claim
// value or the token.
//
// The inbound token is the gateway's own: nothing here, nor in package
// httpgw, forwards it upstream (the specification forbids passthrough).
package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"
)

// Identity is a verified caller: what the policy decides on and the audit
// records. Values come from a verified token but are still the issuer's
// text: reduce them (Safe) before they reach a log or an error.
type Identity struct {
	Issuer   string
	Subject  string
	ClientID string
	Scopes   []string
	Groups   []string
	Roles    []string
	// JTIDigest is "sha256:" + hex of the token's jti ("" without one):
	// enough to correlate audit events with the issuer's records, never the
	// token.
	JTIDigest string
	Expiry    time.Time
}

// Key returns the identity's stable key (issuer and subject), for binding
// sessions and keying rate limits. Two issuers' equal subjects differ.
func (id *Identity) Key() string {
	if id == nil {
		return ""
	}
	return id.Issuer + "\x00" + id.Subject
}

// HasScope reports whether the token granted scope s.
func (id *Identity) HasScope(s string) bool { return id != nil && slices.Contains(id.Scopes, s) }

// SafeSubject is the subject reduced to the audit log's safe character set.
func (id *Identity) SafeSubject() string { return Safe(id.Subject) }

// SafeClientID is the client id reduced to the safe character set.
func (id *Identity) SafeClientID() string { return Safe(id.ClientID) }

// maxSafe bounds a reduced value.
const maxSafe = 128

// Safe reduces an issuer-supplied value to A-Z a-z 0-9 and . _ @ : + -
// (anything else becomes "_"), at most 128 bytes. A subject is chosen by
// an identity provider, and an identity provider's users may choose their
// own names: never write one as it came.
func Safe(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < maxSafe; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '.', c == '_', c == '@', c == ':', c == '+', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func digest(s string) string {
	if s == "" {
		return ""
	}
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}
