package telemetry

import (
	"testing"
)

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// TestNothingExportedUnlessConfigured: the zero config, and the OTEL_*
// variables that do not name an endpoint, start nothing.
func TestNothingExportedUnlessConfigured(t *testing.T) {
	t.Parallel()
	for _, env := range []map[string]string{
		nil,
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"},
	} {
		tel, err := Start(Config{Getenv: envOf(env)})
		if err != nil || tel != nil {
			t.Errorf("env %v: started %v, err %v", env, tel, err)
		}
	}
	var none *Telemetry
	if none.Session("id", "label") != nil || none.MetricsAddr() != nil || none.Close() != nil {
		t.Error("a nil Telemetry is not inert")
	}
}

func TestTraceConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg       Config
		env       map[string]string
		proto, u  string
		wantError bool
	}{
		{cfg: Config{OTLPEndpoint: "http://127.0.0.1:4318"}, proto: ProtocolHTTP, u: "http://127.0.0.1:4318/v1/traces"},
		{cfg: Config{OTLPEndpoint: "https://collector.example:4318/custom"}, proto: ProtocolHTTP, u: "https://collector.example:4318/custom"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, proto: ProtocolHTTP, u: "http://c:4318/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://d:1"}, proto: ProtocolHTTP, u: "http://c:4318/"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, proto: ProtocolGRPC, u: "http://c:4317"},
		{cfg: Config{OTLPEndpoint: "http://c:4317", OTLPProtocol: "grpc"}, env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, proto: ProtocolGRPC, u: "http://c:4317"},
		{cfg: Config{OTLPEndpoint: "http://c:4318", OTLPProtocol: "http/json"}, wantError: true},
		{cfg: Config{OTLPEndpoint: "http://user:secret@c:4318"}, wantError: true},
		{cfg: Config{OTLPEndpoint: "http://c:4318/?token=x"}, wantError: true},
		{cfg: Config{OTLPEndpoint: "ftp://c"}, wantError: true},
		{cfg: Config{OTLPEndpoint: "c:4318"}, wantError: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "zipkin"}, wantError: true},
	} {
		c.cfg.Getenv = envOf(c.env)
		tc, err := traceConfig(c.cfg)
		if c.wantError {
			if err == nil {
				t.Errorf("%+v %v: accepted", c.cfg, c.env)
			}
			continue
		}
		if err != nil || tc == nil || tc.protocol != c.proto || tc.endpoint.String() != c.u {
			t.Errorf("%+v %v: %+v %v", c.cfg, c.env, tc, err)
		}
	}
}

func TestMetricsAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{":9464": "127.0.0.1:9464", "localhost:9464": "127.0.0.1:9464", "[::1]:9464": "[::1]:9464", "0.0.0.0:9464": "0.0.0.0:9464"} {
		if got, _, err := metricsAddr(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"9464", "metrics.example:9464", "127.0.0.1:", "[fe80::1%eth0]:9464"} {
		if _, _, err := metricsAddr(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, loop, _ := metricsAddr("0.0.0.0:1"); loop {
		t.Error("0.0.0.0 taken for loopback")
	}
}

// TestLabelCardinalityIsCapped: a capped label keeps its first values and
// counts every later one as other.
func TestLabelCardinalityIsCapped(t *testing.T) {
	t.Parallel()
	c := newCapped(3)
	for _, v := range []string{"a", "b", "c"} {
		if c.value(v) != v {
			t.Fatal(v)
		}
	}
	if c.value("d") != otherLabel || c.value("a") != "a" {
		t.Fatal("the cap did not hold")
	}
	if got := reduce("x y\n\u00e9" + string(make([]byte, 100))); len(got) > maxLabelLen || got[:3] != "x_y" {
		t.Fatalf("reduce: %q", got)
	}
}
