package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/pin"
)

func init() { register(newApproveCmd) }

func newApproveCmd(e *env) *cobra.Command {
	var (
		yes    bool
		digest string
	)
	cmd := &cobra.Command{
		Use:   "approve ID [--yes] [--digest D]",
		Short: "Pin exactly the reviewed pending change of a server",
		Long: `Pin the pending change of a server that 'mcpseal review ID' showed, for
the client profile it was seen under. For a server first seen under the
strict posture, this pins its first contract. It refuses when the pending change
was never reviewed or has moved since (the server showed yet another
contract): review it again. --digest names the pending contract digest to
approve instead of the reviewed one. Asks for confirmation on a terminal;
without one, --yes is required. ID is the server's id or its label.`,
		Args: exactArgs(1, "one server id or label"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApprove(e, args[0], yes, digest)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve without asking")
	cmd.Flags().StringVar(&digest, "digest", "", "approve this pending contract digest (64 hex characters)")
	return cmd
}

func runApprove(e *env, ref string, yes bool, digest string) error {
	st, err := openStore(e)
	if err != nil {
		return err
	}
	rec, err := st.Get(ref)
	if err != nil {
		return storeError(err)
	}
	p := rec.Pending
	if p == nil {
		return fmt.Errorf("server %s (%s) has no pending change", rec.ID, rec.Label)
	}
	review := fmt.Sprintf("run 'mcpseal review %s' to see the change now pending", rec.ID)
	if digest != "" {
		digest = strings.TrimPrefix(digest, "sha256:")
		if !isHexDigest(digest) {
			return &usageError{withHint(errors.New("--digest must be 64 lowercase hex characters"), "copy it from 'mcpseal review %s --json'", rec.ID)}
		}
		if digest != p.Digest {
			return withHint(fmt.Errorf("the pending change moved: it is %s, not %s", p.Digest, digest), "%s", review)
		}
	} else {
		switch {
		case p.Reviewed:
			digest = p.Digest
		case rec.Reviewed != nil:
			return withHint(fmt.Errorf("the pending change moved since it was reviewed: %s was reviewed, %s is pending now", rec.Reviewed.Digest, p.Digest), "%s", review)
		default:
			return withHint(errors.New("the pending change has not been reviewed"), "run 'mcpseal review %s' first", rec.ID)
		}
	}
	what := "contract"
	if rec.AwaitingApproval() {
		what = "first contract"
	}
	q := fmt.Sprintf("pin %s %s for server %s (%s) under profile %s?", what, digest, rec.ID, rec.Label, oneLine(p.Profile))
	if err := confirm(e, yes, q); err != nil {
		return err
	}
	if err := st.Approve(rec.ID, digest, time.Now()); err != nil {
		if errors.Is(err, pin.ErrPendingMoved) {
			return withHint(err, "%s", review)
		}
		return storeError(err)
	}
	fmt.Fprintf(e.stdout, "approved: server %s (%s) is pinned to contract %s under profile %s\n", rec.ID, rec.Label, digest, oneLine(p.Profile))
	return nil
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
