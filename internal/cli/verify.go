package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { register(newVerifyCmd) }

func newVerifyCmd(e *env) *cobra.Command {
	var state string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify [--json]",
		Short: "Check the pin store's event chain and every pin against it",
		Long: `Check the pin store: the hash chain of events.jsonl, and every server's
record file against its latest event. Exits 1 and lists the faults when
anything was tampered with, deleted or planted.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(e, state, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (see docs/pin-store.md)")
	addStateFlag(cmd, &state)
	return cmd
}

func runVerify(e *env, state string, asJSON bool) error {
	st, done, err := openStateStore(e, state)
	if err != nil {
		return err
	}
	defer done()
	rep, err := st.Verify()
	if err != nil {
		return fmt.Errorf("verifying the pin store: %w", err)
	}
	if asJSON {
		out := verifyJSON{Version: jsonVersion, OK: rep.OK(), Events: rep.Events, Servers: rep.Servers,
			Faults: []faultJSON{}, Notes: rep.Notes}
		if out.Notes == nil {
			out.Notes = []string{}
		}
		for _, f := range rep.Faults {
			out.Faults = append(out.Faults, faultJSON{ID: f.ID, Reason: f.Reason})
		}
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
		if !rep.OK() {
			return exitWith(ExitFailure, nil)
		}
		return nil
	}
	for _, f := range rep.Faults {
		if f.ID == "" {
			fmt.Fprintf(e.stdout, "fault: store: %s\n", f.Reason)
		} else {
			fmt.Fprintf(e.stdout, "fault: server %s: %s\n", f.ID, f.Reason)
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	if !rep.OK() {
		return exitWith(ExitFailure, withHint(fmt.Errorf("the pin store failed verification (%d faults); affected servers are held", len(rep.Faults)),
			"'mcpseal forget ID' deliberately re-trusts one server; to start over, remove %s", st.Dir()))
	}
	fmt.Fprintf(e.stdout, "pin store ok: %d events, %d pinned servers\n", rep.Events, rep.Servers)
	return nil
}
