package cli

import (
	"errors"
	"fmt"
	"os/user"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/pin"
)

func init() { register(newApproveCmd) }

func newApproveCmd(e *env) *cobra.Command {
	var state string
	var (
		yes    bool
		digest string
		by     string
	)
	cmd := &cobra.Command{
		Use:   "approve ID [--yes] [--digest D]",
		Short: "Pin exactly the reviewed pending changes of a server, for every profile",
		Long: `Pin the pending changes of a server that 'mcpseal review ID' showed, for
every client profile they were seen under, at once. For a server first
seen under the strict posture, this pins its first contracts. It refuses
when the pending changes were never reviewed or have moved since (the
server showed yet another contract to any profile): review them again.
--digest names the pending set to approve instead of the reviewed one: its
review-set digest, or, when one profile is pending, that profile's pending
contract digest. Asks for confirmation on a terminal; without one, --yes
is required. ID is the server's id or its label.`,
		Args: exactArgs(1, "one server id or label"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApprove(e, state, args[0], yes, digest, by)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve without asking")
	cmd.Flags().StringVar(&digest, "digest", "", "approve this pending set: its review-set digest, or the pending contract digest of a single pending profile (64 hex characters)")
	cmd.Flags().StringVar(&by, "by", "", "record this name as the approver in the event chain (default the OS user)")
	addStateFlag(cmd, &state)
	return cmd
}

func runApprove(e *env, state string, ref string, yes bool, digest, by string) error {
	if by == "" {
		by = osUser()
	}
	st, done, err := openStateStore(e, state)
	if err != nil {
		return err
	}
	defer done()
	rec, err := st.Get(ref)
	if err != nil {
		return storeError(err)
	}
	if len(rec.Pending) == 0 {
		return fmt.Errorf("server %s (%s) has no pending change", rec.ID, rec.Label)
	}
	review := fmt.Sprintf("run 'mcpseal review %s' to see the change now pending", rec.ID)
	if digest != "" {
		digest = strings.TrimPrefix(digest, "sha256:")
		if !isHexDigest(digest) {
			return &usageError{withHint(errors.New("--digest must be 64 lowercase hex characters"), "copy it from 'mcpseal review %s --json'", rec.ID)}
		}
		single := len(rec.Pending) == 1 && digest == rec.Pending[0].Digest
		if digest != rec.PendingDigest && !single {
			return withHint(fmt.Errorf("the pending change moved: it is %s, not %s", rec.PendingDigest, digest), "%s", review)
		}
	} else {
		switch {
		case rec.PendingReviewed:
			digest = rec.PendingDigest
		case rec.Reviewed != nil:
			return withHint(fmt.Errorf("the pending change moved since it was reviewed: %s was reviewed, %s is pending now", rec.Reviewed.Digest, rec.PendingDigest), "%s", review)
		default:
			return withHint(errors.New("the pending change has not been reviewed"), "run 'mcpseal review %s' first", rec.ID)
		}
	}
	what := "contract"
	if rec.AwaitingApproval() {
		what = "first contract"
	}
	var q string
	if len(rec.Pending) == 1 {
		p := rec.Pending[0]
		q = fmt.Sprintf("pin %s %s for server %s (%s) under profile %s?", what, p.Digest, rec.ID, rec.Label, oneLine(p.Profile))
	} else {
		q = fmt.Sprintf("pin the %ss of pending set %s for server %s (%s) under %s?", what, rec.PendingDigest, rec.ID, rec.Label, profileCount(len(rec.Pending)))
	}
	if err := confirm(e, yes, q); err != nil {
		return err
	}
	if err := st.ApproveBy(rec.ID, digest, by, time.Now()); err != nil {
		if errors.Is(err, pin.ErrPendingMoved) {
			return withHint(err, "%s", review)
		}
		return storeError(err)
	}
	// What Approve pinned is what Get showed: it refuses any other set.
	for _, p := range rec.Pending {
		fmt.Fprintf(e.stdout, "approved: server %s (%s) is pinned to contract %s under profile %s\n", rec.ID, rec.Label, p.Digest, oneLine(p.Profile))
	}
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

// osUser names the person running the command, for the event chain: the
// login name, "" when it cannot be told or is not one printable line.
func osUser() string {
	u, err := user.Current()
	if err != nil || len(u.Username) > 128 {
		return ""
	}
	for _, r := range u.Username {
		if !unicode.IsPrint(r) || r == ' ' {
			return ""
		}
	}
	return u.Username
}
