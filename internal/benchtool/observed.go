package main

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// The telemetry mode (-telemetry, issue 16): one more stdio path, `mcpseal
// run` with its Prometheus endpoint and OTLP/HTTP trace export on,
// compared with plain `mcpseal run` in the same alternations. The
// collector is this process (its CPU is not the proxy's): it takes every
// export and answers with an empty ExportTraceServiceResponse, which is
// zero bytes of protobuf.

// collector is a minimal OTLP/HTTP trace receiver.
type collector struct {
	srv     *http.Server
	url     string
	exports atomic.Int64
}

func startCollector() (*collector, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &collector{url: "http://" + l.Addr().String()}
	c.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
		c.exports.Add(1)
		w.Header().Set("Content-Type", "application/x-protobuf")
	})}
	go func() { _ = c.srv.Serve(l) }()
	return c, nil
}

func (c *collector) stop() { _ = c.srv.Close() }

// observedPath is `mcpseal run` with metrics and traces on.
func observedPath(b *binaries, home, collectorURL string) path {
	server := []string{b.sdkserver, b.defs}
	argv := append([]string{b.mcpseal, "run", "--name", "bench", "--metrics-listen", "127.0.0.1:0", "--otlp-endpoint", collectorURL, "--"}, server...)
	return stdioPath("stdio.mcpseal-observed", "mcpseal run, traces+metrics", argv, home, true, true)
}

// againPath is plain `mcpseal run` once more, measured as a path of its
// own and paired with the first exactly as the telemetry paths are: an
// A/A control. The binary and arguments are the same, so its ratio is
// what the pairing reads when nothing differs, the noise a telemetry
// ratio has to stand out of (docs/performance.md, issue 16).
func againPath(b *binaries, home string) path {
	server := []string{b.sdkserver, b.defs}
	argv := append([]string{b.mcpseal, "run", "--name", "bench", "--"}, server...)
	return stdioPath("stdio.mcpseal-again", "mcpseal run, again (A/A)", argv, home, true, true)
}

// baselinePath is `mcpseal run` of another binary (-baseline), paired
// with this tree's as the telemetry paths are: its ratio is the earlier
// build's CPU and round trip over this one's, an A/B of what changed.
func baselinePath(bin string, b *binaries, home string) path {
	server := []string{b.sdkserver, b.defs}
	argv := append([]string{bin, "run", "--name", "bench", "--"}, server...)
	return stdioPath("stdio.mcpseal-baseline", "mcpseal run, -baseline binary", argv, home, true, true)
}

// metricsPath is `mcpseal run` with the Prometheus endpoint alone on.
func metricsPath(b *binaries, home string) path {
	server := []string{b.sdkserver, b.defs}
	argv := append([]string{b.mcpseal, "run", "--name", "bench", "--metrics-listen", "127.0.0.1:0", "--"}, server...)
	return stdioPath("stdio.mcpseal-metrics", "mcpseal run, metrics only", argv, home, true, true)
}
