package oauth

import (
	"encoding/json"
	"net/http"
	"strings"
)

// WellKnownPrefix is where a route's protected resource metadata is served:
// RFC 9728 §3.1 inserts the well-known path between the host and the
// resource's path, so route "docs" has /.well-known/oauth-protected-resource/docs.
const WellKnownPrefix = "/.well-known/oauth-protected-resource"

// ResourceMetadata is an RFC 9728 protected resource metadata document.
type ResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// Metadata returns route's metadata document.
func (c *Config) Metadata(route string) ResourceMetadata {
	m := ResourceMetadata{Resource: c.RouteResource(route), BearerMethodsSupported: []string{"header"}, ScopesSupported: c.Scopes}
	for _, is := range c.Issuers {
		m.AuthorizationServers = append(m.AuthorizationServers, is.Issuer)
	}
	return m
}

// MetadataURL is the absolute URL of route's metadata document.
func (c *Config) MetadataURL(route string) string {
	return c.Resource + WellKnownPrefix + "/" + route
}

// MetadataRoute returns the route a well-known path names, and whether the
// path is a metadata path at all.
func MetadataRoute(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, WellKnownPrefix+"/")
	if !ok {
		return "", path == WellKnownPrefix
	}
	return rest, true
}

// WriteMetadata answers a metadata request for route.
func (c *Config) WriteMetadata(w http.ResponseWriter, route string) {
	b, _ := json.Marshal(c.Metadata(route))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=300")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// Challenge is the WWW-Authenticate value for a refusal of route (RFC 6750
// §3, RFC 9728 §5.1): the metadata URL always, the OAuth error code when
// a token was presented, and the scopes a client should ask for, as the
// MCP specification's scope selection (2025-11-25) expects. Only
// mcpseal's own values go in it: the resource URL and scopes come from the
// host's file, never from the request.
func (c *Config) Challenge(route string, f *Failure) string {
	var b strings.Builder
	b.WriteString(`Bearer resource_metadata="`)
	b.WriteString(c.MetadataURL(route))
	b.WriteByte('"')
	if f != nil && f.Code != "" {
		b.WriteString(`, error="`)
		b.WriteString(f.Code)
		b.WriteByte('"')
	}
	if len(c.Scopes) > 0 {
		b.WriteString(`, scope="`)
		b.WriteString(strings.Join(c.Scopes, " "))
		b.WriteByte('"')
	}
	return b.String()
}
