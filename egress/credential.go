package egress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// A Credential is the one header an upstream gets to authenticate mcpseal,
// such as "Authorization: Bearer sk-...". It is read once, from a file or
// an environment variable the host named, and sent only to the upstream's
// exact origin.
type Credential struct {
	header string
	value  string
}

// maxCredential bounds a credential file: one header value, with room
// for long JWTs.
const maxCredential = 16 << 10

// reservedHeaders cannot carry a credential: the transport sets them.
var reservedHeaders = map[string]bool{
	"Host": true, "Content-Type": true, "Content-Length": true, "Accept": true,
	"Connection": true, "Transfer-Encoding": true, "Te": true, "Upgrade": true,
	"Trailer": true, "Keep-Alive": true, "Accept-Encoding": true,
	"Last-Event-Id": true, "Expect": true, "Proxy-Authorization": true,
}

// LoadCredential reads a credential for header from file or from the
// environment variable env (exactly one of them). Errors name the source,
// never the value. The file is the host's secret, kept where the host
// keeps secrets (a mounted secret is a link into a versioned folder): a
// final link is followed, but it must lead to a regular file, and a FIFO
// or device is refused without blocking.
func LoadCredential(header, file, env string, getenv func(string) string) (*Credential, error) {
	canon := http.CanonicalHeaderKey(header)
	if !validToken(header) || reservedHeaders[canon] || strings.HasPrefix(canon, "Mcp-") {
		return nil, fmt.Errorf("credential header %q cannot be used", header)
	}
	if (file == "") == (env == "") {
		return nil, errors.New("a credential needs exactly one of a file or an environment variable")
	}
	var value string
	if file != "" {
		b, err := atomicfile.ReadFileFollow(file, maxCredential)
		if errors.Is(err, atomicfile.ErrTooLarge) {
			return nil, fmt.Errorf("the credential file %s is over %d bytes", file, maxCredential)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read the credential file: %w", err)
		}
		value = string(b)
		value = strings.TrimSuffix(strings.TrimSuffix(value, "\n"), "\r")
		if value == "" {
			return nil, fmt.Errorf("the credential file %s is empty", file)
		}
		if !validValue(value) {
			return nil, fmt.Errorf("the credential file %s must hold one line of printable ASCII", file)
		}
	} else {
		value = getenv(env)
		if value == "" {
			return nil, fmt.Errorf("the credential variable %s is not set", env)
		}
		if len(value) > maxCredential || !validValue(value) {
			return nil, fmt.Errorf("the credential variable %s must hold one line of printable ASCII", env)
		}
	}
	return &Credential{header: canon, value: value}, nil
}

// Header is the header name the credential goes in.
func (c *Credential) Header() string { return c.header }

// String never shows the value.
func (c *Credential) String() string { return c.header + ": [redacted]" }

func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTChar(s[i]) {
			return false
		}
	}
	return true
}

func isTChar(c byte) bool {
	switch {
	case '0' <= c && c <= '9', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// validValue: printable ASCII and spaces, no leading or trailing space.
func validValue(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// ambientHeaders carry credentials; stripHeaders removes every one of
// them, and anything that looks like one, before a request leaves.
var ambientHeaders = []string{
	"Authorization", "Proxy-Authorization", "Cookie", "Cookie2",
	"X-Api-Key", "Api-Key", "X-Auth-Token", "X-Access-Token",
	"X-Amz-Security-Token", "X-Goog-Api-Key", "X-Csrf-Token", "X-Xsrf-Token",
	"Ocp-Apim-Subscription-Key",
}

// stripHeaders deletes credential-bearing headers from h.
func stripHeaders(h http.Header) {
	for _, k := range ambientHeaders {
		h.Del(k)
	}
	for k := range h {
		l := strings.ToLower(k)
		if strings.Contains(l, "auth") || strings.Contains(l, "token") || strings.Contains(l, "secret") ||
			strings.Contains(l, "api-key") || strings.Contains(l, "apikey") || strings.Contains(l, "cookie") ||
			strings.Contains(l, "session") && !strings.EqualFold(k, sessionHeader) {
			delete(h, k)
		}
	}
}

// maxCredentialFile bounds a credential file in the JSON form: one header
// and its value, with room to spare.
const maxCredentialFile = 64 << 10

// LoadCredentialFile reads a credential file in the form `mcpseal wrap`
// writes for a remote entry's headers:
//
//	{"version": 1, "headers": {"Authorization": "Bearer sk-..."}}
//
// It must name exactly one header (an upstream gets one credential).
// Errors name the file, never a value. The file is mcpseal's own state
// (wrap writes it under $MCPSEAL_HOME/credentials): it must be a regular
// file, not a link, and a FIFO or device is refused without blocking.
// credentialFileMembers are a credential file's members.
var credentialFileMembers = []string{"version", "headers"}

func LoadCredentialFile(path string) (*Credential, error) {
	b, err := atomicfile.ReadFile(path, maxCredentialFile)
	if errors.Is(err, atomicfile.ErrTooLarge) {
		return nil, fmt.Errorf("the credential file %s is over %d bytes", path, maxCredentialFile)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the credential file: %w", err)
	}
	// Read one way only: no repeated member, no "Version" beside
	// "version" (encoding/json matches names without case).
	if err := jsonrpc.CheckUnique(b); err != nil {
		return nil, fmt.Errorf("the credential file %s is not one JSON value without repeated member names", path)
	}
	if err := jsonrpc.CheckNames(bytes.TrimSpace(b), credentialFileMembers); errors.Is(err, jsonrpc.ErrCaseVariant) {
		return nil, fmt.Errorf("the credential file %s has a member that differs from \"version\" or \"headers\" only in case", path)
	} else if err != nil {
		return nil, fmt.Errorf("the credential file %s is not a JSON object", path)
	}
	var doc struct {
		Version int               `json:"version"`
		Headers map[string]string `json:"headers"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil || doc.Version != 1 {
		return nil, fmt.Errorf("the credential file %s is not {\"version\": 1, \"headers\": {...}}", path)
	}
	if len(doc.Headers) != 1 {
		return nil, fmt.Errorf("the credential file %s must name exactly one header (it names %d)", path, len(doc.Headers))
	}
	for h, v := range doc.Headers {
		canon := http.CanonicalHeaderKey(h)
		if !validToken(h) || reservedHeaders[canon] || strings.HasPrefix(canon, "Mcp-") {
			return nil, fmt.Errorf("credential header %q cannot be used", h)
		}
		if len(v) > maxCredential || !validValue(v) {
			return nil, fmt.Errorf("the credential in %s must be one line of printable ASCII", path)
		}
		return &Credential{header: canon, value: v}, nil
	}
	panic("unreachable")
}
