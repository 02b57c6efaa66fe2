package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/pin"
)

func init() { register(newReviewCmd) }

func newReviewCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "review ID [--json]",
		Short: "Show the labelled diff of a server's pending change and mark it reviewed",
		Long: `Show the pending change of a server: every changed definition with its
labels and a diff against the pin, invisible characters spelled out. For a
server first seen under the strict posture, nothing is pinned yet: every
definition of its first contract is shown in full, as added. The change is
then marked reviewed, and 'mcpseal approve ID' pins exactly it.
If the server shows yet another contract before the approval, approve
refuses. ID is the server's id or its label.`,
		Args: exactArgs(1, "one server id or label"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReview(e, args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the changes with their labels and digests (see docs/pin-store.md)")
	return cmd
}

func runReview(e *env, ref string, asJSON bool) error {
	st, err := openStore(e)
	if err != nil {
		return err
	}
	rec, err := st.Get(ref)
	if err != nil {
		return storeError(err)
	}
	p := rec.Pending
	approve := fmt.Sprintf("mcpseal approve %s", rec.ID)
	if asJSON {
		out := reviewJSON{Version: jsonVersion, ID: rec.ID, Label: rec.Label, State: recordState(rec)}
		if p != nil {
			changes := p.Changes
			if changes == nil {
				changes = []contract.Change{}
			}
			out.Pending = &reviewPendingJSON{Profile: p.Profile, Detected: p.Detected, Digest: p.Digest,
				Base: p.BaseDigests.Contract, Changes: changes}
			out.Approve = approve
		}
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		if p == nil {
			fmt.Fprintf(e.stdout, "server %s (%s): nothing pending\n", rec.ID, rec.Label)
			return nil
		}
		if rec.AwaitingApproval() {
			fmt.Fprintf(e.stdout, "server %s (%s): first contract seen %s under profile %s; nothing is pinned yet\n", rec.ID, rec.Label, humanTime(p.Detected), oneLine(p.Profile))
			fmt.Fprintf(e.stdout, "pinned contract   none\npending contract  %s\n\n", p.Digest)
		} else {
			fmt.Fprintf(e.stdout, "server %s (%s): drift detected %s under profile %s\n", rec.ID, rec.Label, humanTime(p.Detected), oneLine(p.Profile))
			fmt.Fprintf(e.stdout, "pinned contract   %s\npending contract  %s\n\n", p.BaseDigests.Contract, p.Digest)
		}
		switch {
		case len(p.Changes) == 0 && rec.AwaitingApproval():
			fmt.Fprintln(e.stdout, "the server lists nothing: no definitions and no instructions")
		case len(p.Changes) == 0:
			fmt.Fprintln(e.stdout, "no definition changed (the contract differs only in order or repetition)")
		default:
			if err := contract.RenderDiff(e.stdout, p.Base, p.Contract, p.Changes); err != nil {
				return err
			}
		}
	}
	if p == nil {
		return nil
	}
	if err := st.MarkReviewed(rec.ID, p.Digest); err != nil {
		if errors.Is(err, pin.ErrPendingMoved) {
			return withHint(errors.New("the pending change moved while it was shown; it is not marked reviewed"),
				"run 'mcpseal review %s' again", rec.ID)
		}
		return storeError(err)
	}
	if !asJSON {
		fmt.Fprintf(e.stdout, "\nmarked reviewed; to pin exactly this contract, run:\n  %s\n", approve)
	}
	return nil
}
