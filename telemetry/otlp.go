package telemetry

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpClient sends spans to a collector over OTLP/HTTP (binary protobuf)
// or OTLP/gRPC (a unary call over HTTP/2), both on net/http. mcpseal does
// not link the gRPC library: its package initialisation alone costs every
// `mcpseal run` megabytes of memory, tracing or not. An export is one
// request, bounded in time and in what is read back; a failure drops that
// batch (spans are observations, never the audit record).
type otlpClient struct {
	grpc     bool
	endpoint string // the full URL of the export
	headers  http.Header
	hc       *http.Client
}

// Export bounds.
const (
	// maxExportResponse bounds what is read of a collector's answer: an
	// ExportTraceServiceResponse is a few bytes (a partial-success count
	// and message).
	maxExportResponse = 64 << 10
	// maxOTLPHeaders bounds OTEL_EXPORTER_OTLP_HEADERS.
	maxOTLPHeaders = 8 << 10
	grpcExportPath = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
)

func newOTLPClient(tc *tracing, env func(string) string) (*otlpClient, error) {
	c := &otlpClient{grpc: tc.protocol == ProtocolGRPC, headers: http.Header{}}
	u := *tc.endpoint
	if c.grpc {
		u.Path = grpcExportPath
	}
	c.endpoint = u.String()
	raw := env("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
	if raw == "" {
		raw = env("OTEL_EXPORTER_OTLP_HEADERS")
	}
	h, err := parseOTLPHeaders(raw)
	if err != nil {
		return nil, err
	}
	c.headers = h
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	ca := env("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE")
	if ca == "" {
		ca = env("OTEL_EXPORTER_OTLP_CERTIFICATE")
	}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("OTEL_EXPORTER_OTLP_CERTIFICATE: no certificate in the file")
		}
		tlsConf.RootCAs = pool
	}
	timeout := exportTimeout
	if v := env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 || ms > 60000 {
			return nil, errors.New("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: milliseconds, 1 to 60000")
		}
		timeout = time.Duration(ms) * time.Millisecond
	} else if v := env("OTEL_EXPORTER_OTLP_TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 || ms > 60000 {
			return nil, errors.New("OTEL_EXPORTER_OTLP_TIMEOUT: milliseconds, 1 to 60000")
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	tr := &http.Transport{
		Proxy:                 nil, // a collector is reached directly, never through a proxy the environment names
		DialContext:           (&net.Dialer{Timeout: timeout}).DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          2,
		IdleConnTimeout:       time.Minute,
	}
	if c.grpc {
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
	return c, nil
}

// parseOTLPHeaders reads the OTEL_EXPORTER_OTLP_HEADERS format:
// key=value pairs separated by commas, values URL-encoded. A malformed
// list is an error, not a list of the pairs that parsed.
func parseOTLPHeaders(s string) (http.Header, error) {
	h := http.Header{}
	if strings.TrimSpace(s) == "" {
		return h, nil
	}
	if len(s) > maxOTLPHeaders {
		return nil, errors.New("OTEL_EXPORTER_OTLP_HEADERS: too long")
	}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return nil, errors.New("OTEL_EXPORTER_OTLP_HEADERS: not key=value,...")
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil || strings.ContainsAny(val, "\r\n") {
			return nil, errors.New("OTEL_EXPORTER_OTLP_HEADERS: a value is not URL-encoded text")
		}
		h.Add(k, val)
	}
	return h, nil
}

func (c *otlpClient) Start(context.Context) error { return nil }

func (c *otlpClient) Stop(context.Context) error {
	c.hc.CloseIdleConnections()
	return nil
}

// UploadTraces sends one batch.
func (c *otlpClient) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	msg, err := exportRequest(spans)
	if err != nil {
		return err
	}
	body, ctype := msg, "application/x-protobuf"
	if c.grpc {
		// A gRPC message: not compressed, 4-byte big-endian length.
		body = make([]byte, 5+len(msg))
		binary.BigEndian.PutUint32(body[1:5], uint32(len(msg)))
		copy(body[5:], msg)
		ctype = "application/grpc"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
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
		return fmt.Errorf("otlp export: %w", err)
	}
	defer resp.Body.Close()
	// Drain within the bound so the connection can be reused; trailers
	// arrive only once the body is read.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxExportResponse))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("otlp export: HTTP status %d", resp.StatusCode)
	}
	if c.grpc {
		st := resp.Trailer.Get("Grpc-Status")
		if st == "" {
			st = resp.Header.Get("Grpc-Status") // a trailers-only answer
		}
		if st != "0" {
			return fmt.Errorf("otlp export: grpc status %q", st)
		}
	}
	return nil
}

// exportRequest encodes an ExportTraceServiceRequest (field 1: repeated
// ResourceSpans) by hand: the collector package that declares it also
// declares the gRPC service, and importing it links the gRPC library.
// The encoding is protobuf's for a repeated message field: tag 0x0a, the
// length as a varint, the message.
func exportRequest(spans []*tracepb.ResourceSpans) ([]byte, error) {
	var out []byte
	for _, rs := range spans {
		b, err := proto.Marshal(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, 0x0a)
		out = binary.AppendUvarint(out, uint64(len(b)))
		out = append(out, b...)
	}
	return out, nil
}
