package cli

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/mcpseal/mcpseal/pgstate"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/siem"
	"github.com/mcpseal/mcpseal/telemetry"
)

// telemetryFlags are run's and the gateway's exporters; none is on unless
// given (or, for traces, an OTEL_EXPORTER_OTLP_*ENDPOINT variable is set).
type telemetryFlags struct {
	metricsListen string
	otlpEndpoint  string
	otlpProtocol  string
	auditExport   string
}

func (f *telemetryFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.metricsListen, "metrics-listen", "", "serve Prometheus metrics at http://`ADDR`/metrics (IP:PORT, or :PORT for 127.0.0.1; e.g. 127.0.0.1:9464); see docs/observability.md")
	fl.StringVar(&f.otlpEndpoint, "otlp-endpoint", "", "export traces to the OpenTelemetry collector at `URL` (default $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or $OTEL_EXPORTER_OTLP_ENDPOINT; none when unset)")
	fl.StringVar(&f.otlpProtocol, "otlp-protocol", "", "`PROTOCOL` for --otlp-endpoint: http/protobuf or grpc (default $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	addAuditExportFlag(fl, &f.auditExport)
}

func addAuditExportFlag(fl *pflag.FlagSet, p *string) {
	fl.StringVar(p, "audit-export", "", "ship the audit log to the sinks of `FILE` (default $MCPSEAL_HOME/audit-export.json when it exists); see docs/audit.md")
}

// auditExportName is the export file's name under $MCPSEAL_HOME.
const auditExportName = "audit-export.json"

// startAuditExport starts shipping the audit log to the configured sinks;
// nil when none is configured. The log is the one under $MCPSEAL_HOME, or
// with a state database (state, else $MCPSEAL_STATE) the fleet's, whose
// sink cursors and leases are kept in the database. A configured file
// that cannot be read stops mcpseal before any server starts: an export
// the user asked for is never silently off.
func startAuditExport(e *env, path, state string, logger *slog.Logger) (*siem.Exporter, error) {
	home, err := pin.DefaultHome(e.getenv)
	if err != nil {
		return nil, err
	}
	if path == "" {
		path = filepath.Join(home, auditExportName)
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	}
	cfg, err := siem.ReadConfig(path)
	if err != nil {
		return nil, exitWith(ExitRefused, withHint(err, "see docs/audit.md for the export file"))
	}
	url, err := stateURL(e, state)
	if err != nil {
		return nil, err
	}
	src := siem.FileSource(home)
	if url != "" {
		db, err := openStateDB(url, true)
		if err != nil {
			return nil, exitWith(ExitRefused, err)
		}
		src = dbExport{db.AuditExport(), db}
	}
	ex, err := siem.StartFrom(src, cfg, logger)
	if err != nil {
		return nil, exitWith(ExitRefused, err)
	}
	return ex, nil
}

// dbExport is the fleet's audit log as the export's source; closing it
// closes its own connection pool.
type dbExport struct {
	*pgstate.AuditExport
	db *pgstate.DB
}

func (d dbExport) Close() error {
	err := d.AuditExport.Close()
	d.db.Close()
	return err
}

// startTelemetry starts the exporters the flags and the OTEL_* variables
// configure; nil when none is.
func startTelemetry(e *env, f telemetryFlags, logger *slog.Logger) (*telemetry.Telemetry, error) {
	t, err := telemetry.Start(telemetry.Config{
		MetricsListen: f.metricsListen,
		OTLPEndpoint:  f.otlpEndpoint,
		OTLPProtocol:  f.otlpProtocol,
		Getenv:        e.getenv,
		Logger:        logger,
	})
	if err != nil {
		return nil, &usageError{err}
	}
	if a := t.MetricsAddr(); a != nil {
		logger.Info("metrics endpoint listening", "addr", a.String())
	}
	return t, nil
}

// startExporters starts what run and the gateway export (telemetry and
// the audit stream, each nil when not configured); stop stops both.
//
// The audit stream ships the audit log under $MCPSEAL_HOME, or with a
// state database (--state, $MCPSEAL_STATE) the fleet's audit log there.
func startExporters(e *env, f telemetryFlags, state string, logger *slog.Logger) (tel *telemetry.Telemetry, exp *siem.Exporter, stop func(), err error) {
	if tel, err = startTelemetry(e, f, logger); err != nil {
		return nil, nil, nil, err
	}
	if exp, err = startAuditExport(e, f.auditExport, state, logger); err != nil {
		_ = tel.Close()
		return nil, nil, nil, err
	}
	return tel, exp, func() {
		_ = exp.Close()
		_ = tel.Close()
	}, nil
}

// observe adds the session's telemetry to the guard (a nil t adds none).
func (g *hostGuard) observe(t *telemetry.Telemetry, s hostSpec, sink *auditSink) {
	if t == nil {
		return
	}
	if sink != nil {
		remove := t.AuditQueue(sink.queued, sink.dropped.Load)
		g.closers = append(g.closers, func() error { remove(); return nil })
	}
	ts := t.Session(s.id.ID, s.id.Label)
	g.hooks = ts.Hooks(g.hooks)
	g.closers = append(g.closers, ts.Close)
}
