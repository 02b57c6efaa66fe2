package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/pin"
)

func init() { register(newAuditCmd) }

func newAuditCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Check and read the audit log of every decision the gate took",
		Long: `The audit log records every decision the gate took — connections, listings,
calls, confirmations, drift, withheld tools and results — as hash-chained JSON
lines under $MCPSEAL_HOME/audit. It holds codes, names, digests and sizes,
never arguments, results, descriptions or credentials (see docs/audit.md).`,
		Args: exactArgs(0, "a subcommand: verify or tail"),
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newAuditVerifyCmd(e), newAuditTailCmd(e), newAuditShipCmd(e))
	return cmd
}

func newAuditVerifyCmd(e *env) *cobra.Command {
	var asJSON bool
	var state string
	var stream, sink string
	var from, to int64
	cmd := &cobra.Command{
		Use:   "verify [--json] [--stream FILE [--sink NAME | --from N --to N]]",
		Short: "Check the audit log's hash chain across every file",
		Long: `Check every line of the audit log: its form, the hash chain across the
current and rotated files, the file names, the prune records and the head.
Exits 1 and lists the faults when a line was changed, removed, inserted or
reordered, or a file was removed.

With --stream FILE, check a receiver's copy of the audit stream (a SIEM's
export: audit lines, webhook batch bodies or syslog messages, one a line,
in the order received) against the local log: a missing event (gap), an
event whose bytes differ from the local one (rewrite), a repeat that
differs, a broken chain, or an event the local log no longer holds are
faults; exact repeats (at-least-once delivery) are counted, not faults.
By default the copy must run without a gap from its own first event to
its own last; --sink NAME requires every event from 1 (or --from) to the
last one that sink acknowledged (its cursor here), and --from/--to give
the bounds by hand, so that a copy missing its first or last batch fails
(one alone implies the other: --to from 1, --from to the local head; an
empty copy with a bound fails).
With --state (or $MCPSEAL_STATE) the copy is checked against the fleet's
audit log in the database, and --sink reads the sink's cursor there.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if stream != "" {
				return runAuditVerifyStream(e, stream, asJSON, state, streamBounds{sink: sink, from: from, to: to})
			}
			if sink != "" || from != 0 || to != 0 {
				return &usageError{errors.New("--sink, --from and --to bound a --stream check")}
			}
			return runAuditVerify(e, asJSON, state)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (see docs/audit.md)")
	addStateFlag(cmd, &state)
	cmd.Flags().StringVar(&stream, "stream", "", "check a receiver's copy of the audit stream in `FILE` against the local log")
	cmd.Flags().StringVar(&sink, "sink", "", "with --stream: the copy must hold every event up to the last the sink `NAME` acknowledged")
	cmd.Flags().Int64Var(&from, "from", 0, "with --stream: the copy must hold every event from seq `N` on")
	cmd.Flags().Int64Var(&to, "to", 0, "with --stream: the copy must hold every event up to seq `N`")
	return cmd
}

func auditHome(e *env) (string, error) {
	home, err := pin.DefaultHome(e.getenv)
	if err != nil {
		return "", withHint(err, "set MCPSEAL_HOME to an absolute path")
	}
	return home, nil
}

// auditVerifyJSON is the --json output of audit verify.
type auditVerifyJSON struct {
	Version int  `json:"version"`
	OK      bool `json:"ok"`
	*audit.Report
}

func runAuditVerify(e *env, asJSON bool, state string) error {
	rep, where, err := verifyAuditLog(e, state)
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(e.stdout, auditVerifyJSON{Version: jsonVersion, OK: rep.OK(), Report: rep}); err != nil {
			return err
		}
		if !rep.OK() {
			return exitWith(ExitFailure, nil)
		}
		return nil
	}
	for _, f := range rep.Faults {
		where := f.File
		if f.Line > 0 {
			where = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		if where == "" {
			where = "log"
		}
		fmt.Fprintf(e.stdout, "fault: %s: %s\n", where, f.Reason)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	if !rep.OK() {
		return exitWith(ExitFailure, withHint(fmt.Errorf("the audit log failed verification (%d faults)", len(rep.Faults)),
			"keep a copy of %s for investigation; the log is tamper-evident, not tamper-proof", where))
	}
	if rep.Events == 0 {
		fmt.Fprintln(e.stdout, "audit log ok: no events yet")
		return nil
	}
	fmt.Fprintf(e.stdout, "audit log ok: %d events (%d to %d) in %d files\n", rep.Events, rep.First, rep.Last, rep.Files)
	return nil
}

func newAuditTailCmd(e *env) *cobra.Command {
	var asJSON bool
	var state string
	var n int
	var subject string
	cmd := &cobra.Command{
		Use:   "tail [--json] [-n N] [--subject SUBJECT]",
		Short: "Show the most recent audit events",
		Long: `Show the last N events of the audit log (default 20, at most 10000), oldest
first. It reads for display; 'mcpseal audit verify' is the integrity check.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 || n > audit.MaxTail {
				return &usageError{withHint(fmt.Errorf("-n must be between 1 and %d", audit.MaxTail), "see 'mcpseal audit tail --help'")}
			}
			return runAuditTail(e, n, asJSON, subject, state)
		},
	}
	cmd.Flags().StringVar(&subject, "subject", "", "only events of this authenticated `SUBJECT` (the team gateway's callers)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (see docs/audit.md)")
	cmd.Flags().IntVarP(&n, "lines", "n", 20, "how many events to show")
	addStateFlag(cmd, &state)
	return cmd
}

// auditTailJSON is the --json output of audit tail.
type auditTailJSON struct {
	Version int           `json:"version"`
	Events  []audit.Event `json:"events"`
	Skipped int           `json:"skipped"`
}

func runAuditTail(e *env, n int, asJSON bool, subject, state string) error {
	events, skipped, err := tailAuditLog(e, n, subject, state)
	if err != nil {
		return err
	}
	if asJSON {
		if events == nil {
			events = []audit.Event{}
		}
		return writeJSON(e.stdout, auditTailJSON{Version: jsonVersion, Events: events, Skipped: skipped})
	}
	if skipped > 0 {
		fmt.Fprintf(e.stderr, "mcpseal: %d lines could not be read and were skipped; run 'mcpseal audit verify'\n", skipped)
	}
	if len(events) == 0 {
		fmt.Fprintln(e.stdout, "no audit events")
		return nil
	}
	return printEvents(e.stdout, events)
}

// printEvents writes one line per event: time, operation, outcome, server,
// then the fields the event has. Every field was reduced to a safe
// character set when it was written.
func printEvents(w io.Writer, events []audit.Event) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tOPERATION\tOUTCOME\tSERVER\tDETAILS")
	for _, ev := range events {
		server := "-"
		if ev.Server != "" {
			server = ev.Server
			if ev.Label != "" {
				server = ev.Label + " (" + ev.Server + ")"
			}
		}
		var details []string
		add := func(k, v string) {
			if v != "" {
				details = append(details, k+"="+v)
			}
		}
		add("tool", ev.Tool)
		add("code", ev.Code)
		add("stage", ev.Stage)
		add("provider", ev.Provider)
		add("digest", short(ev.Digest))
		add("contract", short(ev.Contract))
		add("receipt", short(ev.Receipt))
		add("subject", ev.Subject)
		add("client", ev.Client)
		add("jti", short(ev.JTI))
		for _, n := range []struct {
			k string
			v int64
		}{{"count", ev.Count}, {"bytes", ev.Bytes}, {"ms", ev.Millis}} {
			if n.v != 0 {
				details = append(details, fmt.Sprintf("%s=%d", n.k, n.v))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", humanTime(ev.Time), ev.Op, ev.Outcome, server, strings.Join(details, " "))
	}
	return tw.Flush()
}

// short abbreviates a digest for a terminal line.
func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// verifyAuditLog verifies the audit log in the state database state names,
// else under $MCPSEAL_HOME; where names it for a hint.
func verifyAuditLog(e *env, state string) (*audit.Report, string, error) {
	url, err := stateURL(e, state)
	if err != nil {
		return nil, "", err
	}
	if url != "" {
		db, err := openStateDB(url, false)
		if err != nil {
			return nil, "", err
		}
		defer db.Close()
		rep, err := db.VerifyAudit(context.Background())
		if err != nil {
			return nil, "", fmt.Errorf("verifying the audit log: %w", err)
		}
		return rep, "the table mcpseal_audit_events of " + db.Name(), nil
	}
	home, err := auditHome(e)
	if err != nil {
		return nil, "", err
	}
	rep, err := audit.Verify(home)
	if err != nil {
		return nil, "", fmt.Errorf("verifying the audit log: %w", err)
	}
	return rep, audit.Dir(home), nil
}

// tailAuditLog reads the last n events of the audit log state names,
// else of the one under $MCPSEAL_HOME; with subject, only that
// authenticated caller's events.
func tailAuditLog(e *env, n int, subject, state string) ([]audit.Event, int, error) {
	url, err := stateURL(e, state)
	if err != nil {
		return nil, 0, err
	}
	// The log holds subjects reduced to its safe set; so is the filter.
	want := ""
	if subject != "" {
		want = audit.ReduceSubject(subject)
	}
	var (
		events  []audit.Event
		skipped int
	)
	if url != "" {
		db, err := openStateDB(url, false)
		if err != nil {
			return nil, 0, err
		}
		defer db.Close()
		events, skipped, err = db.TailAudit(context.Background(), n, want)
		if err != nil {
			return nil, 0, fmt.Errorf("reading the audit log: %w", err)
		}
		return events, skipped, nil
	}
	home, err := auditHome(e)
	if err != nil {
		return nil, 0, err
	}
	var keep func(*audit.Event) bool
	if want != "" {
		keep = func(ev *audit.Event) bool { return ev.Subject == want }
	}
	if events, skipped, err = audit.TailMatching(home, n, keep); err != nil {
		return nil, 0, fmt.Errorf("reading the audit log: %w", err)
	}
	return events, skipped, nil
}
