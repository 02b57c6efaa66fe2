package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/pin"
)

func init() { register(newReviewCmd) }

func newReviewCmd(e *env) *cobra.Command {
	var state string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "review ID [--json]",
		Short: "Show the labelled diff of a server's pending changes and mark them reviewed",
		Long: `Show the pending changes of a server: for every client profile whose
session drifted, every changed definition (and the protocol, if it changed)
with its labels and a diff against the pin, invisible characters spelled
out. Profiles that saw the same change are shown once, together. For a
server first seen under the strict posture, nothing is pinned yet: every
definition of its first contract is shown in full, as added. The changes
of all profiles are then marked reviewed as one set, and 'mcpseal approve
ID' pins exactly them, for every profile at once. If the server shows yet
another contract to any profile before the approval, approve refuses. ID
is the server's id or its label.`,
		Args: exactArgs(1, "one server id or label"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReview(e, state, args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the changes with their labels and digests (see docs/pin-store.md)")
	addStateFlag(cmd, &state)
	return cmd
}

func runReview(e *env, state string, ref string, asJSON bool) error {
	st, done, err := openStateStore(e, state)
	if err != nil {
		return err
	}
	defer done()
	rec, err := st.Get(ref)
	if err != nil {
		return storeError(err)
	}
	approve := fmt.Sprintf("mcpseal approve %s", rec.ID)
	groups := changeGroups(rec.Pending)
	if asJSON {
		out := reviewJSON{Version: jsonVersion, ID: rec.ID, Label: rec.Label, State: recordState(rec), Profiles: []reviewPendingJSON{}}
		for _, p := range rec.Pending {
			changes := p.Changes
			if changes == nil {
				changes = []contract.Change{}
			}
			out.Profiles = append(out.Profiles, reviewPendingJSON{Profile: p.Profile, Detected: p.Detected, Digest: p.Digest,
				Base: p.BaseDigests.Contract, Protocol: p.Protocol, Fallback: p.Fallback, Changes: changes})
		}
		if len(out.Profiles) > 0 {
			out.Pending = &out.Profiles[0]
			out.Digest, out.Identical, out.Approve = rec.PendingDigest, len(groups) == 1, approve
		}
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		if len(rec.Pending) == 0 {
			fmt.Fprintf(e.stdout, "server %s (%s): nothing pending\n", rec.ID, rec.Label)
			return nil
		}
		if err := renderReview(e, rec, groups); err != nil {
			return err
		}
	}
	if len(rec.Pending) == 0 {
		return nil
	}
	if err := st.MarkReviewed(rec.ID, rec.PendingDigest); err != nil {
		if errors.Is(err, pin.ErrPendingMoved) {
			return withHint(errors.New("the pending change moved while it was shown; it is not marked reviewed"),
				"run 'mcpseal review %s' again", rec.ID)
		}
		return storeError(err)
	}
	if !asJSON {
		if len(rec.Pending) == 1 {
			fmt.Fprintf(e.stdout, "\nmarked reviewed; to pin exactly this contract, run:\n  %s\n", approve)
		} else {
			fmt.Fprintf(e.stdout, "\nmarked reviewed (pending set %s, %s); to pin exactly these contracts for every profile, run:\n  %s\n",
				rec.PendingDigest, profileCount(len(rec.Pending)), approve)
		}
	}
	return nil
}

// changeGroups groups the pending profiles that show the same changes
// (same definitions, digests, protocol and labels), in profile order.
func changeGroups(pending []pin.Pending) [][]pin.Pending {
	var groups [][]pin.Pending
	index := map[string]int{}
	for _, p := range pending {
		key, err := json.Marshal(p.Changes)
		if err != nil {
			key = []byte(p.Profile) // cannot happen: changes are strings
		}
		if i, ok := index[string(key)]; ok {
			groups[i] = append(groups[i], p)
			continue
		}
		index[string(key)] = len(groups)
		groups = append(groups, []pin.Pending{p})
	}
	return groups
}

// renderReview writes the pending changes for a person: a header, one line
// per pending profile when there are several, then each group's diff.
func renderReview(e *env, rec *pin.Record, groups [][]pin.Pending) error {
	w := e.stdout
	if len(rec.Pending) == 1 {
		p := rec.Pending[0]
		if rec.AwaitingApproval() {
			fmt.Fprintf(w, "server %s (%s): first contract seen %s under profile %s; nothing is pinned yet\n", rec.ID, rec.Label, humanTime(p.Detected), oneLine(p.Profile))
			fmt.Fprintf(w, "pinned contract   none\npending contract  %s\n\n", p.Digest)
		} else {
			fmt.Fprintf(w, "server %s (%s): drift detected %s under profile %s\n", rec.ID, rec.Label, humanTime(p.Detected), oneLine(p.Profile))
			fmt.Fprintf(w, "pinned contract   %s\npending contract  %s\n\n", p.BaseDigests.Contract, p.Digest)
		}
		return renderChanges(w, rec, p)
	}
	if rec.AwaitingApproval() {
		fmt.Fprintf(w, "server %s (%s): first contracts seen under %s; nothing is pinned yet\n", rec.ID, rec.Label, profileCount(len(rec.Pending)))
	} else {
		fmt.Fprintf(w, "server %s (%s): drift detected under %s\n", rec.ID, rec.Label, profileCount(len(rec.Pending)))
	}
	for _, p := range rec.Pending {
		pinned := p.BaseDigests.Contract
		if rec.AwaitingApproval() {
			pinned = "none"
		}
		fmt.Fprintf(w, "  profile %s  detected %s\n    pinned contract   %s\n    pending contract  %s\n", oneLine(p.Profile), humanTime(p.Detected), pinned, p.Digest)
	}
	fmt.Fprintf(w, "pending set %s\n", rec.PendingDigest)
	if len(groups) == 1 {
		fmt.Fprintf(w, "\nidentical in all %d profiles:\n\n", len(rec.Pending))
		return renderChanges(w, rec, groups[0][0])
	}
	fmt.Fprintf(w, "\nthe profiles differ: %d different changes\n", len(groups))
	for _, g := range groups {
		keys := make([]string, 0, len(g))
		for _, p := range g {
			keys = append(keys, oneLine(p.Profile))
		}
		noun := "profile"
		if len(g) > 1 {
			noun = "profiles"
		}
		fmt.Fprintf(w, "\nin %s %s:\n\n", noun, strings.Join(keys, ", "))
		if err := renderChanges(w, rec, g[0]); err != nil {
			return err
		}
	}
	return nil
}

// renderChanges writes one pending profile's labelled diff.
func renderChanges(w io.Writer, rec *pin.Record, p pin.Pending) error {
	switch {
	case len(p.Changes) == 0 && rec.AwaitingApproval():
		_, err := fmt.Fprintln(w, "the server lists nothing: no definitions and no instructions")
		return err
	case len(p.Changes) == 0:
		_, err := fmt.Fprintln(w, "no definition differs from the pinned ones (a new client profile, held for review under strict, or a contract that differs only in order or repetition)")
		return err
	}
	return contract.RenderDiff(w, p.Base, p.Contract, p.Changes)
}
