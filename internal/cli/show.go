package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/contract"
)

func init() { register(newShowCmd) }

func newShowCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID [--json]",
		Short: "Show every pinned digest of a server, per profile and kind",
		Long: `Show a pinned server's contract digests: for every client profile, the
contract digest, the set digest of each kind, the instructions digest and
every definition's digest, then those of the pending change, if any. A
server first seen under the strict posture has no profile pinned until its
first contract is reviewed and approved. ID is the server's id or its label.`,
		Args: exactArgs(1, "one server id or label"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShow(e, args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (see docs/pin-store.md)")
	return cmd
}

func runShow(e *env, ref string, asJSON bool) error {
	st, err := openStore(e)
	if err != nil {
		return err
	}
	rec, err := st.Get(ref)
	if err != nil {
		return storeError(err)
	}
	if asJSON {
		out := showJSON{
			Version: jsonVersion, ID: rec.ID, Label: rec.Label, State: recordState(rec),
			Created: rec.Created, Updated: rec.Updated, LastSeen: timePtr(rec.LastSeen),
			Profiles: []profileJSON{},
		}
		for _, p := range rec.Profiles {
			out.Profiles = append(out.Profiles, profileJSON{Key: p.Key, Pinned: p.Pinned, contractJSON: contractDigests(p.Contract)})
		}
		if p := rec.Pending; p != nil {
			out.Pending = &pendingJSON{Profile: p.Profile, Detected: p.Detected, Reviewed: p.Reviewed, contractJSON: contractDigests(p.Contract)}
		}
		if m := rec.Reviewed; m != nil {
			out.Reviewed = &reviewMarkJSON{Profile: m.Profile, Digest: m.Digest, Time: m.Time}
		}
		return writeJSON(e.stdout, out)
	}
	w := e.stdout
	fmt.Fprintf(w, "server     %s  %s\n", rec.ID, rec.Label)
	fmt.Fprintf(w, "created    %s\n", humanTime(rec.Created))
	fmt.Fprintf(w, "updated    %s\n", humanTime(rec.Updated))
	fmt.Fprintf(w, "last seen  %s\n", humanTime(rec.LastSeen))
	if rec.AwaitingApproval() {
		fmt.Fprintf(w, "\nno profile is pinned yet: nothing about this server is trusted until its first contract is approved\n")
	}
	for _, p := range rec.Profiles {
		fmt.Fprintf(w, "\nprofile %s (pinned %s)\n", oneLine(p.Key), humanTime(p.Pinned))
		showContract(w, p.Contract, p.Digests)
	}
	if p := rec.Pending; p != nil {
		reviewed := "not reviewed"
		if p.Reviewed {
			reviewed = "reviewed"
		}
		what := "drift pending"
		if rec.AwaitingApproval() {
			what = "first contract awaiting approval"
		}
		fmt.Fprintf(w, "\n%s under profile %s (detected %s, %s)\n", what, oneLine(p.Profile), humanTime(p.Detected), reviewed)
		showContract(w, p.Contract, p.Digests)
		fmt.Fprintf(w, "\nreview it with: mcpseal review %s\n", rec.ID)
	}
	return nil
}

func showContract(w io.Writer, c *contract.Contract, d contract.Digests) {
	fmt.Fprintf(w, "  contract           %s\n", d.Contract)
	instr := "none"
	if d.Instructions != nil {
		instr = *d.Instructions
	}
	fmt.Fprintf(w, "  instructions       %s\n", instr)
	for _, k := range contract.Kinds {
		fmt.Fprintf(w, "  %-18s %s  (%d)\n", k, d.Sets[k], len(c.Defs[k]))
		for _, def := range c.Defs[k] {
			fmt.Fprintf(w, "    %s  %s\n", def.Digest, oneLine(def.Name))
		}
	}
}
