package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The OTLP protocols mcpseal speaks (OTEL_EXPORTER_OTLP_PROTOCOL values).
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// Span export bounds: spans wait at most spanBatchTimeout to be sent, and
// at most spanQueue of them wait (more are dropped by spanBatcher, counted
// in the export warning), so a collector that is down costs bounded memory
// and no call ever waits for it.
const (
	spanQueue        = 2048
	spanBatch        = 512
	spanBatchTimeout = 2 * time.Second
	exportTimeout    = 10 * time.Second
)

// tracing is one signal's export: traces or metrics.
type tracing struct {
	signal   string // TRACES or METRICS, as in the variables' names
	protocol string
	endpoint *url.URL
}

// traceConfig decides whether traces are on; see signalConfig.
func traceConfig(cfg Config) (*tracing, error) { return signalConfig(cfg, "TRACES") }

// signalConfig decides whether a signal (TRACES or METRICS) is exported
// over OTLP: only when an endpoint is configured (the flag, which serves
// both, or an OTEL_EXPORTER_OTLP_[SIGNAL_]ENDPOINT variable), and
// OTEL_SDK_DISABLED and OTEL_[SIGNAL]_EXPORTER do not turn it off. What it
// cannot honour is an error, never a silent default.
func signalConfig(cfg Config, signal string) (*tracing, error) {
	env := cfg.Getenv
	raw, from := cfg.OTLPEndpoint, "--otlp-endpoint"
	exact := false // the URL is the signal's URL itself, path and all
	if raw == "" {
		if v := env("OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"); v != "" {
			raw, from, exact = v, "OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT", true
		} else {
			raw, from = env("OTEL_EXPORTER_OTLP_ENDPOINT"), "OTEL_EXPORTER_OTLP_ENDPOINT"
		}
	}
	if raw == "" {
		return nil, nil
	}
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	switch ex := env("OTEL_" + signal + "_EXPORTER"); ex {
	case "", "otlp":
	case "none":
		return nil, nil
	default:
		return nil, fmt.Errorf("OTEL_%s_EXPORTER=%q: mcpseal exports over otlp or not at all (none)", signal, ex)
	}
	proto := cfg.OTLPProtocol
	if proto == "" {
		proto = env("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	}
	if proto == "" {
		proto = env("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto == "" {
		proto = ProtocolHTTP
	}
	if proto != ProtocolGRPC && proto != ProtocolHTTP {
		return nil, fmt.Errorf("OTLP protocol %q: use grpc or http/protobuf", proto)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%s: not an http or https URL", from)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		// Credentials go in OTEL_EXPORTER_OTLP_HEADERS, never in a URL
		// that ends up in logs and process listings.
		return nil, fmt.Errorf("%s: no user, query or fragment in the collector's URL (headers go in OTEL_EXPORTER_OTLP_HEADERS)", from)
	}
	if proto == ProtocolHTTP && !exact && (u.Path == "" || u.Path == "/") {
		u.Path = "/v1/" + strings.ToLower(signal)
	}
	return &tracing{signal: signal, protocol: proto, endpoint: u}, nil
}

// tracerName is the instrumentation scope of mcpseal's spans.
const tracerName = "github.com/mcpseal/mcpseal/telemetry"

func (t *Telemetry) startTraces(tc *tracing) error {
	c, err := newOTLPClient(tc, t.getenv)
	if err != nil {
		return err
	}
	// Spans go to the collector through spanExporter (package
	// internal/otlp: OTLP/HTTP or OTLP/gRPC on net/http). A failure drops
	// that batch (spans are observations, never the audit record).
	// Unset, a client's unsampled traceparent does not switch off the
	// gate's own trace of what it did with that client's requests.
	sampler, err := samplerFromEnv(t.getenv)
	if err != nil {
		c.Close()
		return err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", t.service)))
	if err != nil {
		res = resource.NewSchemaless(attribute.String("service.name", t.service))
	}
	// The provider's limits are the SDK's, from OTEL_SPAN_* as it reads
	// them; mcpseal's own spans (reqspan.go) are bounded by the same.
	own := spanOrigin{res: res, scope: instrumentation.Scope{Name: tracerName}, limits: sdktrace.NewSpanLimits()}
	exp := &spanExporter{c: c, own: own}
	t.spans = newSpanBatcher(exp, otel.Handle, own.limits, spanBatchTimeout, spanBatch, spanQueue)
	t.sampler = sampler
	t.tp = sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(t.spans),
		sdktrace.WithIDGenerator(randomIDs{}), // the request and upstream spans' ids come from it too
		sdktrace.WithSampler(sampler),
		sdktrace.WithRawSpanLimits(own.limits),
	)
	t.tracer = t.tp.Tracer(tracerName)
	otel.SetErrorHandler(t.exportErr)
	return nil
}

// exportErrors reports the exporter's failures on stderr, at most one a
// minute: a collector that is down must not flood the log.
type exportErrors struct {
	log  interface{ Warn(string, ...any) }
	last atomic.Int64
	n    atomic.Int64
}

func (e *exportErrors) Handle(err error) {
	n := e.n.Add(1)
	now := time.Now().UnixNano()
	last := e.last.Load()
	if last != 0 && time.Duration(now-last) < time.Minute {
		return
	}
	if e.last.CompareAndSwap(last, now) {
		var msg string
		if errors.Is(err, context.DeadlineExceeded) {
			msg = "timeout"
		} else {
			msg = err.Error()
		}
		e.log.Warn("telemetry export failed", "err", msg, "failures", n)
	}
}
