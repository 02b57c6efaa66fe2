package telemetry

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/internal/otlp"
)

// services are the OTLP gRPC services, by signal.
var services = map[string]string{
	"TRACES":  "opentelemetry.proto.collector.trace.v1.TraceService",
	"METRICS": "opentelemetry.proto.collector.metrics.v1.MetricsService",
}

// maxOTLPHeaders bounds OTEL_EXPORTER_OTLP_HEADERS, and maxCAFile the
// roots file a certificate variable names.
const (
	maxOTLPHeaders = 8 << 10
	maxCAFile      = 1 << 20
)

// newOTLPClient makes the client of one signal from its variables.
func newOTLPClient(tc *tracing, env func(string) string) (*otlp.Client, error) {
	raw := env("OTEL_EXPORTER_OTLP_" + tc.signal + "_HEADERS")
	if raw == "" {
		raw = env("OTEL_EXPORTER_OTLP_HEADERS")
	}
	headers, err := parseOTLPHeaders(raw)
	if err != nil {
		return nil, err
	}
	var roots *x509.CertPool
	ca := env("OTEL_EXPORTER_OTLP_" + tc.signal + "_CERTIFICATE")
	if ca == "" {
		ca = env("OTEL_EXPORTER_OTLP_CERTIFICATE")
	}
	if ca != "" {
		pem, err := atomicfile.ReadFileFollow(ca, maxCAFile)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: %w", err)
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, errors.New("OTEL_EXPORTER_OTLP_CERTIFICATE: no certificate in the file")
		}
	}
	timeout := exportTimeout
	for _, k := range []string{"OTEL_EXPORTER_OTLP_" + tc.signal + "_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
		if v := env(k); v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 || ms > 60000 {
				return nil, errors.New(k + ": milliseconds, 1 to 60000")
			}
			timeout = time.Duration(ms) * time.Millisecond
			break
		}
	}
	return otlp.New(tc.endpoint, tc.protocol == ProtocolGRPC, services[tc.signal], headers, roots, timeout), nil
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
