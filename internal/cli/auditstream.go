package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/siem"
)

// maxStreamCopy bounds the receiver's copy `audit verify --stream` reads:
// a year of a busy gate's events at a few hundred bytes each.
const maxStreamCopy = 1 << 30

// auditStreamJSON is the --json output of audit verify --stream.
type auditStreamJSON struct {
	Version int  `json:"version"`
	OK      bool `json:"ok"`
	*audit.StreamReport
}

// streamBounds are verify --stream's --sink, --from and --to.
type streamBounds struct {
	sink     string
	from, to int64
}

// resolve turns the flags into the events the copy must hold: --sink
// reads the sink's cursor (and the copy must then start at 1 unless
// --from says otherwise); a sink with no cursor, or bounds that cannot be
// met, are refused rather than read as no bound.
func (b streamBounds) resolve(cursor func(sink string) (int64, bool, error)) (audit.StreamBounds, error) {
	out := audit.StreamBounds{From: b.from, To: b.to}
	if b.from < 0 || b.to < 0 {
		return out, &usageError{errors.New("--from and --to are event seqs, 1 or more")}
	}
	if b.sink != "" {
		if b.to != 0 {
			return out, &usageError{errors.New("--sink and --to both give the last event: pass one")}
		}
		seq, ok, err := cursor(b.sink)
		if err != nil {
			return out, &usageError{fmt.Errorf("--sink: %w", err)}
		}
		if !ok {
			return out, exitWith(ExitFailure, withHint(fmt.Errorf("sink %s has no cursor here: it acknowledged nothing", b.sink), "run it on the machine that ships to the sink"))
		}
		out.To = seq
		if out.From == 0 {
			out.From = 1
		}
	}
	if out.To != 0 && out.From > out.To {
		return out, &usageError{errors.New("--from is after the last event to check")}
	}
	return out, nil
}

func runAuditVerifyStream(e *env, path string, asJSON bool, state string, sb streamBounds) error {
	home, err := auditHome(e)
	if err != nil {
		return err
	}
	url, err := stateURL(e, state)
	if err != nil {
		return err
	}
	files := siem.FileSource(home)
	defer files.Close()
	log, src := audit.FileLog(home), files
	if url != "" {
		db, err := openStateDB(url, false)
		if err != nil {
			return err
		}
		defer db.Close()
		x := db.AuditExport()
		log, src = x, x
	}
	bounds, err := sb.resolve(func(sink string) (int64, bool, error) { return siem.SinkCursor(src, sink) })
	if err != nil {
		return err
	}
	data, err := atomicfile.ReadFileFollow(path, maxStreamCopy)
	if err != nil {
		return fmt.Errorf("reading the stream copy: %w", err)
	}
	lines, err := siem.ParseCopy(data)
	if err != nil {
		return exitWith(ExitFailure, fmt.Errorf("the stream copy: %w", err))
	}
	rep, err := audit.CheckStreamOf(log, lines, bounds)
	if err != nil {
		return fmt.Errorf("reading the audit log: %w", err)
	}
	if asJSON {
		if err := writeJSON(e.stdout, auditStreamJSON{Version: jsonVersion, OK: rep.OK(), StreamReport: rep}); err != nil {
			return err
		}
		if !rep.OK() {
			return exitWith(ExitFailure, nil)
		}
		return nil
	}
	for _, f := range rep.Faults {
		fmt.Fprintf(e.stdout, "fault: %s: %s\n", f.Reason, f.Detail)
	}
	if rep.Unavailable > 0 {
		fmt.Fprintf(e.stdout, "note: %d events of the copy were pruned here by rotation; the chain checked them\n", rep.Unavailable)
	}
	if rep.Unanchored > 0 {
		fmt.Fprintf(e.stdout, "note: %d pruned events of the copy are tied to no hash the local log kept; only their chain checked them\n", rep.Unanchored)
	}
	if rep.NotYet > 0 {
		fmt.Fprintf(e.stdout, "note: %d local events follow the copy's last (not delivered yet)\n", rep.NotYet)
	}
	if !rep.OK() {
		return exitWith(ExitFailure, withHint(fmt.Errorf("the stream copy failed verification (%d faults)", len(rep.Faults)),
			"a gap is an event the receiver never got; a rewrite is an event changed on the way or at either end"))
	}
	if rep.Events == 0 {
		fmt.Fprintln(e.stdout, "stream copy ok: no events")
		return nil
	}
	fmt.Fprintf(e.stdout, "stream copy ok: %d events (%d to %d), %d repeats\n", rep.Events, rep.First, rep.Last, rep.Duplicates)
	return nil
}

func newAuditShipCmd(e *env) *cobra.Command {
	var path, state string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "ship [--audit-export FILE] [--state URL] [--timeout D]",
		Short: "Send the audit events the sinks have not taken yet, then exit",
		Long: `Ship every audit event a sink of the export file has not acknowledged,
waiting at most --timeout; exits 1 when a sink is still behind. mcpseal run
and the gateway ship while they run; this drains what they left (from a
timer, or before a machine is retired). With --state (or $MCPSEAL_STATE)
it ships the fleet's audit log from the database.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout <= 0 || timeout > time.Hour {
				return &usageError{errors.New("--timeout must be more than 0 and at most 1h")}
			}
			logger, err := newLogger(e.stderr, "info")
			if err != nil {
				return err
			}
			ex, err := startAuditExport(e, path, state, logger)
			if err != nil {
				return err
			}
			if ex == nil {
				return &usageError{errors.New("no audit export configured: pass --audit-export FILE or write $MCPSEAL_HOME/" + auditExportName)}
			}
			defer ex.Close()
			if err := ex.Ship(timeout); err != nil {
				return exitWith(ExitFailure, err)
			}
			fmt.Fprintln(e.stdout, "audit stream: every sink has every event")
			return nil
		},
	}
	addAuditExportFlag(cmd.Flags(), &path)
	addStateFlag(cmd, &state)
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the sinks")
	return cmd
}
