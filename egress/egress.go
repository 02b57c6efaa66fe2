// Package egress is mcpseal's only way out to a remote MCP server: a
// Streamable HTTP client that cannot be turned against the machine it runs
// on, and an adapter that makes a remote server look like a stdio child
// (stdio.Server), so that the session gate and every transport in front of
// it work unchanged.
//
// # The egress rule
//
// An upstream is one exact URL chosen by the host (a routes file, a
// command-line flag), never by a client, a server or a model.
//
//   - HTTPS only. The destination must be a public address: loopback,
//     private (RFC 1918, ULA), link-local, CGNAT (100.64.0.0/10), cloud
//     metadata (169.254.169.254, fd00:ec2::254), unspecified, multicast and
//     reserved addresses are refused (see Classify). IPv4-mapped, NAT64 and
//     6to4 addresses are judged by the IPv4 address they carry.
//   - The check runs at connect time, on the address actually being
//     connected, in the net.Dialer's Control hook, for every new connection.
//     A name that resolves to a public address once and to 127.0.0.1 or
//     169.254.169.254 the next time (DNS rebinding) is refused the second
//     time.
//   - An upstream marked private (Options.Private: the routes file's
//     "private": true, run's --private) may reach loopback, RFC 1918, ULA,
//     IPv4 link-local and CGNAT addresses. Its name is resolved once, when
//     the upstream is created, and the connection only ever goes to those
//     pinned addresses. Metadata addresses stay refused, and so does IPv6
//     link-local (a pinned address cannot carry its interface zone). Plain
//     http:// is accepted only when every pinned address is loopback.
//   - Redirects are never followed: a 3xx answer is an error.
//   - No ambient credentials: requests are built from nothing, with no
//     cookie jar and no proxy from the environment, and a last pass removes
//     every credential-bearing header (Authorization, Cookie,
//     Proxy-Authorization, X-Api-Key and the like) before the route's own
//     credential is added — and that only when the request's origin is the
//     upstream's exact origin (scheme, host and port).
//   - Bounded: connect, header and total timeouts per request; request
//     bodies, JSON responses and each server-sent event bounded by
//     MaxMessage, each event stream by MaxStream.
//
// A misbehaving upstream — refused address, redirect, slow, huge, endless,
// wrong content type, error status — gets the waiting request a JSON-RPC
// error with CodeUpstream and a stable reason (never the upstream's own
// text), and Options.OnFailure a Failure record with no content in it.
//
// # Streamable HTTP, both generations
//
// The adapter speaks the client side of Streamable HTTP for the legacy
// protocol (2024-11-05 to 2025-11-25: initialize, Mcp-Session-Id,
// MCP-Protocol-Version after initialize, a GET stream for server messages,
// Last-Event-ID to resume a broken stream, DELETE on close) and for
// 2026-07-28 (no session; each request's version from its
// params._meta; Mcp-Method, Mcp-Name and Mcp-Param-* headers derived from
// the exact body sent, see Headers). A message is modern when its
// params._meta carries "io.modelcontextprotocol/protocolVersion". Every
// POST carries Accept: application/json, text/event-stream and gets JSON
// or an event stream back.
//
// # Example
//
//	up, err := egress.NewUpstream("https://mcp.example.com/mcp", egress.Options{
//		Server: gate.ServerRef{ID: id.ID, Label: id.Label},
//	})
//	if err != nil { ... }
//	res, err := stdio.Run(ctx, stdio.Config{Server: up, Gate: g, ...})
package egress

import (
	"crypto/x509"
	"log/slog"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// CodeUpstream is the JSON-RPC error code of a request the upstream failed
// (see the reasons below). It sits in the implementation range
// -32000..-32019 next to the gate's codes, and never changes meaning.
const CodeUpstream = -32014

// Reasons in error data and Failure records. Stable strings.
const (
	ReasonAddress     = "egress-refused"        // the destination address is not allowed
	ReasonRedirect    = "upstream-redirect"     // a 3xx answer: redirects are never followed
	ReasonTimeout     = "upstream-timeout"      // connect, header or total timeout
	ReasonTooLarge    = "upstream-too-large"    // a message or a stream over its limit
	ReasonContentType = "upstream-content-type" // neither application/json nor text/event-stream
	ReasonStatus      = "upstream-status"       // an HTTP error status without a JSON-RPC answer
	ReasonUnreachable = "upstream-unreachable"  // DNS, TCP, TLS or a broken stream
	ReasonInvalid     = "upstream-invalid"      // the body is not a JSON-RPC message
	ReasonExpired     = "upstream-session-gone" // the upstream forgot the session (404)
)

// Defaults for Options' zero fields.
const (
	DefaultConnectTimeout = 10 * time.Second
	// DefaultHeaderTimeout is generous because a server that answers with
	// JSON sends its headers only with the result.
	DefaultHeaderTimeout  = 2 * time.Minute
	DefaultRequestTimeout = 10 * time.Minute
	// DefaultMaxMessage is the stdio frame limit: one message is one frame.
	DefaultMaxMessage = jsonrpc.DefaultMaxFrame
	// DefaultMaxStream bounds one event stream: a handful of large results
	// and any number of progress notifications.
	DefaultMaxStream = 256 << 20
	// DefaultMaxInFlight bounds concurrent POSTs to one upstream.
	DefaultMaxInFlight = 64
	// maxHeaderBytes bounds an upstream's response headers.
	maxHeaderBytes = 64 << 10
	// maxErrorBody bounds the body read from an error status.
	maxErrorBody = 64 << 10
)

// Options configure an Upstream. Zero fields take the defaults.
type Options struct {
	// Private allow-lists this exact upstream URL for private and loopback
	// addresses (see the package doc).
	Private bool
	// Credential, when set, is sent to the upstream's exact origin only.
	Credential *Credential
	// Server names the upstream in error data.
	Server gate.ServerRef

	ConnectTimeout time.Duration
	HeaderTimeout  time.Duration
	RequestTimeout time.Duration
	MaxMessage     int
	MaxStream      int64
	MaxInFlight    int

	// Resolver resolves the upstream's name; nil uses net.DefaultResolver.
	Resolver Resolver
	// RootCAs verifies the upstream's certificate; nil uses the system's.
	RootCAs *x509.CertPool
	// OnFailure, when set, receives every refusal and failure, for audit.
	// It must not block.
	OnFailure func(Failure)
	Logger    *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = DefaultHeaderTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = DefaultMaxMessage
	}
	if o.MaxStream <= 0 {
		o.MaxStream = DefaultMaxStream
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Failure is one refusal or failure on the way to an upstream, for audit.
// It carries no message content and no upstream-supplied text.
type Failure struct {
	Reason string // one of the Reason constants
	Origin string // the upstream's origin, from the host's own configuration
	// Method is the JSON-RPC method of the request that failed, if any.
	Method string
	// Addr is the refused address (ReasonAddress) and its class.
	Addr  string
	Class Class
	// Status is the HTTP status (ReasonStatus, ReasonRedirect).
	Status int
	// Limit is the limit passed (ReasonTooLarge), in bytes.
	Limit int64
}

// ErrorData is the data member of the errors the adapter answers with.
type ErrorData struct {
	Reason string         `json:"reason"`
	Server gate.ServerRef `json:"server"`
	Status int            `json:"status,omitempty"`
}
