package policy

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"sync"
	"time"
)

// This file holds what every external decision provider shares. The
// built-in provider (the policy file) is not one of them: Session applies
// it directly, first, and without I/O.

// providerConfig is one checked entry of "providers".
type providerConfig struct {
	name    string
	kind    string
	timeout time.Duration
	stages  map[Stage]bool
	// command providers
	command []string
	env     []string
	// http providers
	url       string
	keys      map[string]ed25519.PublicKey
	bearerEnv string
}

// answer is one provider's decision.
type answer struct {
	decision Decision
	// reason is the provider's code (charset-checked), may be empty.
	reason string
	// expires is when the decision stops applying; zero means it answers
	// this one question and is not cached.
	expires time.Time
	receipt *ReceiptRef
}

// provider is an external decision provider.
type provider interface {
	decide(ctx context.Context, req *Request, now time.Time) (answer, error)
	// local reports whether the provider runs on this machine, and may
	// therefore see argv and full URLs.
	local() bool
}

// A providerError is a provider that gave no usable decision. reason is a
// stable code; detail is for the operator's log, in mcpseal's words.
type providerError struct {
	reason string
	detail string
}

func (e *providerError) Error() string { return e.reason + ": " + e.detail }

func failed(detail string) error { return &providerError{reason: ReasonProviderFailed, detail: detail} }

// newProvider builds the provider pc configures.
func newProvider(pc *providerConfig, o Options) provider {
	switch pc.kind {
	case kindCommand:
		return &commandProvider{cfg: pc, getenv: o.Getenv}
	case kindHTTP:
		return &httpProvider{cfg: pc, client: providerClient(o.HTTPClient, pc.timeout), getenv: o.Getenv}
	}
	panic("policy: unchecked provider kind " + pc.kind)
}

// providerClient returns the client an http provider uses: the host's,
// or a new one, never following redirects (a receipt comes from the
// pinned URL or not at all) and bounded in time. A client without a
// transport of its own gets providerTransport: not the default one,
// which sends requests through whatever proxy HTTPS_PROXY names (threat
// model, known gap 15).
func providerClient(base *http.Client, timeout time.Duration) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	}
	if c.Transport == nil {
		c.Transport = providerTransport()
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if c.Timeout == 0 || c.Timeout > timeout {
		c.Timeout = timeout
	}
	return &c
}

// providerTransport is the default transport without a proxy from the
// environment, shared by every provider of the process.
var providerTransport = sync.OnceValue(func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	return t
})
