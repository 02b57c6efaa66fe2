package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func init() { register(newListCmd) }

func newListCmd(e *env) *cobra.Command {
	var state string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the pinned servers, when they were last seen, pending drift, and servers awaiting first approval",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runList(e, state, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (see docs/pin-store.md)")
	addStateFlag(cmd, &state)
	return cmd
}

func runList(e *env, state string, asJSON bool) error {
	st, done, err := openStateStore(e, state)
	if err != nil {
		return err
	}
	defer done()
	sums, err := st.List()
	if err != nil {
		return storeError(err)
	}
	if asJSON {
		out := listJSON{Version: jsonVersion, Servers: []summaryJSON{}}
		for _, s := range sums {
			j := summaryJSON{ID: s.ID, State: stateTampered, Tampered: s.Tampered}
			if s.Tampered == "" {
				j.State = stateOK
				switch {
				case s.AwaitingApproval:
					j.State = stateAwaitingApproval
				case s.DriftPending:
					j.State = stateDriftPending
				}
				j.Label = s.Label
				j.Created, j.Updated, j.LastSeen = timePtr(s.Created), timePtr(s.Updated), timePtr(s.LastSeen)
				j.Profiles, j.Definitions = s.Profiles, s.Definitions
				j.DriftPending, j.Pending = s.DriftPending, s.Pending
				j.PendingDigest, j.PendingProfiles = s.PendingDigest, s.PendingProfiles
			}
			out.Servers = append(out.Servers, j)
		}
		return writeJSON(e.stdout, out)
	}
	if len(sums) == 0 {
		fmt.Fprintln(e.stdout, "no pinned servers")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLABEL\tLAST SEEN\tPROFILES\tDEFINITIONS\tSTATUS")
	tampered := 0
	for _, s := range sums {
		if s.Tampered != "" {
			tampered++
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\ttampered: %s\n", s.ID, s.Tampered)
			continue
		}
		status := "ok"
		switch {
		case s.AwaitingApproval:
			status = "awaiting first approval"
		case s.DriftPending:
			status = "drift pending"
		}
		if s.PendingProfiles > 1 {
			status += fmt.Sprintf(" (%d profiles)", s.PendingProfiles)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", s.ID, s.Label, humanTime(s.LastSeen), s.Profiles, s.Definitions, status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if tampered > 0 {
		return exitWith(ExitFailure, withHint(fmt.Errorf("%d pinned servers fail their integrity check and are held", tampered),
			"run 'mcpseal verify' for details"))
	}
	return nil
}
