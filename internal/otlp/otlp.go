// Package otlp sends OTLP export requests to a collector over OTLP/HTTP
// (binary protobuf) or OTLP/gRPC (a unary call over HTTP/2), both on
// net/http. mcpseal does not link the gRPC library: its package
// initialisation alone costs every mcpseal process megabytes of memory,
// exporting or not. An export is one request, bounded in time and in what
// is read back.
package otlp

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// maxResponse bounds what is read of a collector's answer: an export
// response is a few bytes (a partial-success count and message).
const maxResponse = 64 << 10

// Client posts export requests to one endpoint.
type Client struct {
	grpc    bool
	url     string
	headers http.Header
	hc      *http.Client
}

// New returns a client for the export at u: for gRPC, u's scheme and
// host, with service (such as
// "opentelemetry.proto.collector.trace.v1.TraceService") as the path; for
// HTTP, u itself. roots may be nil (the system's).
func New(u *url.URL, grpc bool, service string, headers http.Header, roots *x509.CertPool, timeout time.Duration) *Client {
	c := &Client{grpc: grpc, headers: headers}
	target := *u
	if grpc {
		target.Path = "/" + service + "/Export"
	}
	c.url = target.String()
	tr := &http.Transport{
		Proxy:                 nil, // a collector is reached directly, never through a proxy the environment names
		DialContext:           (&net.Dialer{Timeout: timeout}).DialContext,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots},
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          2,
		IdleConnTimeout:       time.Minute,
	}
	if grpc {
		// gRPC is HTTP/2 only: with TLS negotiated by ALPN, in the clear
		// as h2c (prior knowledge), as collectors listen on 4317.
		var p http.Protocols
		if u.Scheme == "https" {
			p.SetHTTP2(true)
		} else {
			p.SetUnencryptedHTTP2(true)
		}
		tr.Protocols = &p
		tr.ForceAttemptHTTP2 = true
	}
	c.hc = &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c
}

// Repeated encodes messages as protobuf field 1, repeated (tag 0x0a, a
// varint length, the message): the shape of every OTLP export request
// (resource_spans, resource_logs, resource_metrics). The collector
// packages that declare those requests also declare the gRPC services,
// and importing them links the gRPC library.
func Repeated(msgs [][]byte) []byte {
	n := 0
	for _, m := range msgs {
		n += len(m) + 11
	}
	out := make([]byte, 0, n)
	for _, m := range msgs {
		out = append(out, 0x0a)
		out = binary.AppendUvarint(out, uint64(len(m)))
		out = append(out, m...)
	}
	return out
}

// Export sends one encoded export request and returns the collector's
// answer (the export response message, at most maxResponse bytes).
func (c *Client) Export(ctx context.Context, msg []byte) ([]byte, error) {
	body, ctype := msg, "application/x-protobuf"
	if c.grpc {
		// A gRPC message: not compressed, 4-byte big-endian length.
		body = make([]byte, 5+len(msg))
		binary.BigEndian.PutUint32(body[1:5], uint32(len(msg)))
		copy(body[5:], msg)
		ctype = "application/grpc"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("User-Agent", "mcpseal")
	if c.grpc {
		req.Header.Set("TE", "trailers")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("otlp export: %w", err)
	}
	defer resp.Body.Close()
	// Read within the bound; the rest is drained so the connection can be
	// reused, and trailers arrive only once the body is read.
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("otlp export: HTTP status %d", resp.StatusCode)
	}
	if c.grpc {
		st := resp.Trailer.Get("Grpc-Status")
		if st == "" {
			st = resp.Header.Get("Grpc-Status") // a trailers-only answer
		}
		if st != "0" {
			return nil, fmt.Errorf("otlp export: grpc status %q", st)
		}
		// One length-prefixed message, uncompressed.
		if len(answer) < 5 || answer[0] != 0 || int(binary.BigEndian.Uint32(answer[1:5])) != len(answer)-5 {
			if len(answer) == 0 {
				return nil, nil
			}
			return nil, fmt.Errorf("otlp export: a gRPC answer that is not one uncompressed message")
		}
		answer = answer[5:]
	}
	return answer, nil
}

// Close drops idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }
