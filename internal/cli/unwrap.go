package cli

import (
	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/wire"
)

func init() { register(newUnwrapCmd) }

func newUnwrapCmd(e *env) *cobra.Command {
	var f wireFlags
	cmd := &cobra.Command{
		Use:   "unwrap [--config FILE]... [--project[=DIR]] [--yes] [--dry-run]",
		Short: "Restore the original launch lines of wrapped MCP servers",
		Long: `Unwrap undoes wrap in every client's config (or the --config files): each
wrapped entry gets back exactly the bytes it had before wrap, from the
record wrap kept in $MCPSEAL_HOME/wire. An entry edited since wrap, or
wrapped by hand, gets its original command back from the launch line (the
command after --); a remote entry edited since wrap is left for you to
restore from its backup. The credential file wrap wrote for a remote entry
is removed.

Each file is backed up first and replaced atomically. Pins are kept: wrap
the server again and it is checked against the same pin. It asks for
confirmation on a terminal; without one it writes nothing unless --yes is
given.

Exit status: 0 when every file was handled, 1 when something could not be
restored (it is listed), 2 usage.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUnwrap(e, f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.configs, "config", nil, "edit only this `FILE` (repeatable)")
	fl.StringVar(&f.project, "project", "", "also edit the project configs in `DIR` (default: the current folder)")
	fl.Lookup("project").NoOptDefVal = "."
	fl.BoolVarP(&f.yes, "yes", "y", false, "write without asking")
	fl.BoolVar(&f.dryRun, "dry-run", false, "show the plan and write nothing")
	return cmd
}

func runUnwrap(e *env, f wireFlags) error {
	o, err := wireOptions(e, f)
	if err != nil {
		return err
	}
	files, err := wireTargets(e, f)
	if err != nil {
		return err
	}
	recs, err := wire.LoadRecords(o.Home)
	if err != nil {
		return err
	}
	return runPlan(e, f, wire.PlanUnwrap(files, o, recs), "unwrap")
}
