package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/contract"
)

func init() { register(newShowCmd) }

func newShowCmd(e *env) *cobra.Command {
	var state string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID [--json]",
		Short: "Show every pinned digest of a server, per profile and kind",
		Long: `Show a pinned server's contract digests: for every client profile, the
contract digest, the set digest of each kind, the instructions digest and
every definition's digest and the protocol the server agreed to, then
those of every pending profile's change, if any. A
server first seen under the strict posture has no profile pinned until its
first contract is reviewed and approved. ID is the server's id or its label.`,
		Args: exactArgs(1, "one server id or label"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShow(e, state, args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (see docs/pin-store.md)")
	addStateFlag(cmd, &state)
	return cmd
}

func runShow(e *env, state string, ref string, asJSON bool) error {
	st, done, err := openStateStore(e, state)
	if err != nil {
		return err
	}
	defer done()
	rec, err := st.Get(ref)
	if err != nil {
		return storeError(err)
	}
	if asJSON {
		out := showJSON{
			Version: jsonVersion, ID: rec.ID, Label: rec.Label, State: recordState(rec),
			Created: rec.Created, Updated: rec.Updated, LastSeen: timePtr(rec.LastSeen),
			Profiles: []profileJSON{}, PendingProfiles: []pendingJSON{}, PendingDigest: rec.PendingDigest,
		}
		for _, p := range rec.Profiles {
			out.Profiles = append(out.Profiles, profileJSON{Key: p.Key, Pinned: p.Pinned, Protocol: p.Protocol, Fallback: p.Fallback, contractJSON: contractDigests(p.Contract)})
		}
		for _, p := range rec.Pending {
			out.PendingProfiles = append(out.PendingProfiles, pendingJSON{Profile: p.Profile, Detected: p.Detected, Reviewed: rec.PendingReviewed,
				Protocol: p.Protocol, Fallback: p.Fallback, contractJSON: contractDigests(p.Contract)})
		}
		if len(out.PendingProfiles) > 0 {
			out.Pending = &out.PendingProfiles[0]
		}
		if m := rec.Reviewed; m != nil {
			out.Reviewed = &reviewMarkJSON{Digest: m.Digest, Time: m.Time}
			if rec.PendingReviewed && len(rec.Pending) == 1 {
				out.Reviewed.Profile = rec.Pending[0].Profile
			}
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
		fmt.Fprintf(w, "  protocol           %s\n", protocolText(p.Protocol, p.Fallback, "approved fallback from server/discover"))
		showContract(w, p.Contract, p.Digests)
	}
	if len(rec.Pending) == 0 {
		return nil
	}
	reviewed := "not reviewed"
	if rec.PendingReviewed {
		reviewed = "reviewed"
	}
	what := "drift pending"
	if rec.AwaitingApproval() {
		what = "first contract awaiting approval"
	}
	for _, p := range rec.Pending {
		fmt.Fprintf(w, "\n%s under profile %s (detected %s, %s)\n", what, oneLine(p.Profile), humanTime(p.Detected), reviewed)
		fmt.Fprintf(w, "  protocol           %s\n", protocolText(p.Protocol, p.Fallback, "server/discover refused"))
		showContract(w, p.Contract, p.Digests)
	}
	fmt.Fprintf(w, "\npending set %s (%s)\n", rec.PendingDigest, profileCount(len(rec.Pending)))
	fmt.Fprintf(w, "review it with: mcpseal review %s\n", rec.ID)
	return nil
}

// protocolText shows a stored protocol version at a terminal.
func protocolText(p *string, fallback bool, fallbackNote string) string {
	switch {
	case p == nil:
		return "not recorded yet"
	case *p == "":
		return "none named"
	case fallback:
		return oneLine(*p) + " (" + fallbackNote + ")"
	}
	return oneLine(*p)
}

// profileCount says "1 profile" or "N profiles".
func profileCount(n int) string {
	if n == 1 {
		return "1 profile"
	}
	return fmt.Sprintf("%d profiles", n)
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
