package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/pin"
)

func init() { register(newForgetCmd) }

func newForgetCmd(e *env) *cobra.Command {
	var state string
	var yes bool
	cmd := &cobra.Command{
		Use:   "forget ID [--yes]",
		Short: "Remove a server's pin; its next session starts afresh",
		Long: `Remove a server's pin, pending change and history from the store (the
event chain keeps a forget event). The server's next session starts
afresh: under the guard and monitor postures it pins whatever the server
serves at that moment, so forget only a server you trust now; under strict
it records that contract for review and pins nothing. This is also how to
re-trust a server whose pin failed its integrity check. Asks
for confirmation on a terminal; without one, --yes is required. ID is the
server's id, or the label of an intact pin.`,
		Args: exactArgs(1, "one server id or label"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runForget(e, state, args[0], yes)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "forget without asking")
	addStateFlag(cmd, &state)
	return cmd
}

func runForget(e *env, state string, ref string, yes bool) error {
	st, done, err := openStateStore(e, state)
	if err != nil {
		return err
	}
	defer done()
	id, what := ref, "server "+ref
	rec, err := st.Get(ref)
	var te *pin.TamperError
	switch {
	case err == nil:
		id, what = rec.ID, fmt.Sprintf("server %s (%s)", rec.ID, rec.Label)
	case errors.As(err, &te) && te.ID != "":
		id, what = te.ID, fmt.Sprintf("server %s, whose pin fails its integrity check,", te.ID)
	default:
		return storeError(err)
	}
	q := fmt.Sprintf("forget %s? its next session pins whatever it serves then (under strict, waits for approval)", what)
	if err := confirm(e, yes, q); err != nil {
		return err
	}
	if err := st.Forget(id, time.Now()); err != nil {
		return storeError(err)
	}
	fmt.Fprintf(e.stdout, "forgot server %s; its next session pins its contract afresh (under strict, after approval)\n", id)
	return nil
}
