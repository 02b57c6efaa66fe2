// Package telemetry reads mcpseal's decisions off the gate for the people
// who watch it: Prometheus metrics on a loopback endpoint of their own and
// OpenTelemetry traces over OTLP (HTTP or gRPC). Nothing is exported, and
// no listener opened, unless configured.
//
// It observes; it never decides. A Session is a gate.Observer: it peeks at
// the envelopes of the frames the gate takes and emits (method, id, the
// tools/call name, a client's params._meta trace context) and at the
// gate's audit events, and turns them into counters, histograms and
// spans. It keeps no frame and changes none: the gate forwards what it
// forwards byte for byte, so a client's own params._meta.traceparent
// reaches the server as the client sent it and the server continues the
// client's trace.
//
// What a span or a metric may carry is fixed: MCP method names from a
// fixed list, tool names reduced to a safe character set, mcpseal's own
// reason codes, counts and durations, the session id mcpseal makes itself.
// Never arguments, results, descriptions, schemas, tokens, HTTP session
// ids or request ids (a client chooses those, and they may hold anything).
//
// Spans of a session:
//
//	mcpseal.session                   one per gate session
//	├─ initialize                     one per client request: "{mcp.method.name} [{gen_ai.tool.name}]"
//	│  └─ mcpseal.verify              the contract check of the session
//	└─ tools/call NAME
//	   ├─ mcpseal.preflight           a preflight provider's decision
//	   ├─ mcpseal.confirm             a person's confirmation
//	   └─ mcpseal.upstream            the round trip to the server (written by
//	                                  the exporter with its parent: upstream.go)
//
// A request that carries a valid W3C traceparent in params._meta is a
// child of the client's span instead, with a link to its session.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Config says what to export. The zero Config exports nothing.
type Config struct {
	// MetricsListen is the address of the Prometheus endpoint
	// (host:port, or :port for 127.0.0.1); "" for none.
	MetricsListen string
	// OTLPEndpoint is the OTLP collector's URL for traces; "" reads the
	// standard OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and
	// OTEL_EXPORTER_OTLP_ENDPOINT, and without either no trace leaves.
	OTLPEndpoint string
	// OTLPProtocol is grpc or http/protobuf; "" reads
	// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL,
	// else http/protobuf.
	OTLPProtocol string
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
	// Logger receives the exporters' own troubles.
	Logger *slog.Logger
	// Service is the service.name resource attribute (mcpseal).
	Service string
}

// Telemetry is the process's exporters. A nil *Telemetry is valid and
// exports nothing.
type Telemetry struct {
	m       *metrics
	tp      *sdktrace.TracerProvider
	tracer  trace.Tracer
	sampler sdktrace.Sampler // the provider's, for request spans (reqspan.go)
	spans   *spanBatcher     // the tracer provider's span processor
	srv     *http.Server
	addr    net.Addr
	log     *slog.Logger
	service string
	getenv  func(string) string

	// open are the sessions not closed yet: Close ends their spans before
	// the last export, so that a session a transport closes late (the
	// gateway's, at shutdown) is not lost.
	mu   sync.Mutex
	open map[*Session]struct{}

	push      *pusher // OTLP metrics, when configured
	exportErr *exportErrors
}

// ErrMetricsAddress is returned for a --metrics-listen that is not an IP
// address and port (a name would be resolved, and could resolve to anything).
var ErrMetricsAddress = errors.New("the metrics address must be IP:PORT or :PORT")

// Start starts what cfg configures; with nothing configured it returns
// nil and no error.
func Start(cfg Config) (*Telemetry, error) {
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Service == "" {
		cfg.Service = "mcpseal"
	}
	tc, err := traceConfig(cfg)
	if err != nil {
		return nil, err
	}
	mc, err := signalConfig(cfg, "METRICS")
	if err != nil {
		return nil, err
	}
	if cfg.MetricsListen == "" && tc == nil && mc == nil {
		return nil, nil
	}
	t := &Telemetry{log: cfg.Logger, service: cfg.Service, getenv: cfg.Getenv, open: make(map[*Session]struct{}), exportErr: &exportErrors{log: cfg.Logger}}
	t.m = newMetrics()
	if cfg.MetricsListen != "" {
		if err := t.serveMetrics(cfg.MetricsListen); err != nil {
			return nil, err
		}
	}
	if tc != nil {
		if err := t.startTraces(tc); err != nil {
			_ = t.Close()
			return nil, err
		}
	}
	if mc != nil {
		if err := t.startMetricPush(mc); err != nil {
			_ = t.Close()
			return nil, err
		}
	}
	return t, nil
}

// metricsAddr reads a --metrics-listen value: IP:PORT, or :PORT for
// 127.0.0.1.
func metricsAddr(s string) (addr string, loopback bool, err error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil || port == "" {
		return "", false, ErrMetricsAddress
	}
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil || strings.Contains(host, "%") {
		return "", false, ErrMetricsAddress
	}
	return net.JoinHostPort(ip.String(), port), ip.IsLoopback(), nil
}

// Metrics endpoint bounds: a scraper gets the page within these or not at
// all; no request body is read.
const (
	metricsReadTimeout  = 5 * time.Second
	metricsWriteTimeout = 10 * time.Second
	metricsHeaderBytes  = 8 << 10
)

func (t *Telemetry) serveMetrics(listen string) error {
	addr, loopback, err := metricsAddr(listen)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics endpoint: %w", err)
	}
	if !loopback {
		t.log.Warn("the metrics endpoint listens beyond this machine; anyone who reaches it reads the counters (no content)", "addr", l.Addr().String())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if loopback && !loopbackHost(r.Host) {
			// DNS rebinding: a web page whose name resolves to 127.0.0.1
			// would read which tools were called, and how often.
			http.Error(w, "mcpseal: this metrics endpoint answers only a loopback Host", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_ = t.m.reg.writeTo(w)
	})
	t.srv = &http.Server{Handler: mux, ReadHeaderTimeout: metricsReadTimeout, ReadTimeout: metricsReadTimeout,
		WriteTimeout: metricsWriteTimeout, MaxHeaderBytes: metricsHeaderBytes}
	t.addr = l.Addr()
	go func() {
		if err := t.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.log.Error("metrics endpoint stopped", "err", err)
		}
	}()
	return nil
}

// loopbackHost reports whether a request's Host names this machine:
// localhost or a loopback IP literal, with or without a port.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// MetricsAddr is the metrics endpoint's address, nil without one.
func (t *Telemetry) MetricsAddr() net.Addr {
	if t == nil {
		return nil
	}
	return t.addr
}

// closeGrace bounds how long Close waits to export the last spans: a
// collector that is down must not keep mcpseal from exiting.
const closeGrace = 3 * time.Second

// Close flushes the spans still queued (bounded by closeGrace) and stops
// the metrics endpoint.
func (t *Telemetry) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	open := make([]*Session, 0, len(t.open))
	for s := range t.open {
		open = append(open, s)
	}
	t.mu.Unlock()
	for _, s := range open {
		_ = s.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	if t.push != nil {
		errs = append(errs, t.push.close(ctx))
	}
	if t.srv != nil {
		errs = append(errs, t.srv.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// AuditQueue reports one audit writer's queue depth and drops on the
// metrics; the returned function removes it (its drops stay counted).
func (t *Telemetry) AuditQueue(depth func() int, dropped func() int64) (remove func()) {
	if t == nil {
		return func() {}
	}
	a := &auditSource{depth: depth, dropped: dropped}
	m := t.m
	m.auditMu.Lock()
	m.audits[a] = struct{}{}
	m.auditMu.Unlock()
	return func() {
		m.auditMu.Lock()
		defer m.auditMu.Unlock()
		if _, ok := m.audits[a]; ok {
			delete(m.audits, a)
			m.retired += a.dropped()
		}
	}
}
