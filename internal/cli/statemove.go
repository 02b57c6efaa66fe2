package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/pgstate"
	"github.com/mcpseal/mcpseal/pin"
)

// newStateMoveCmd is state import (into the database) or state export
// (out of it).
func newStateMoveCmd(e *env, into bool) *cobra.Command {
	var state string
	use, short, long := "export --state postgres://... DIR", "Copy the state database's pins and audit log into a home folder",
		`Write the database's pin store (records, event chain, last-seen times)
and audit log into DIR, laid out as $MCPSEAL_HOME is, byte for byte. DIR must
hold no pins and no audit log yet. Both are verified before and after: a
database that does not verify is refused.`
	if into {
		use, short, long = "import --state postgres://... DIR", "Copy a home folder's pins and audit log into the state database",
			`Write the pin store (records, event chain, last-seen times) and audit log
of DIR, a single machine's $MCPSEAL_HOME, into the database, byte for byte,
each in one transaction. The database must hold no pins and no audit events
yet. Both are verified before and after: a home folder that does not verify
is refused. Lock sequences and log checkpoints are not moved: replicas
record them afresh.`
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  exactArgs(1, "one folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			url, err := stateURL(e, state)
			if err != nil {
				return err
			}
			if url == "" {
				return &usageError{fmt.Errorf("state %s needs --state or $%s", cmd.Name(), stateEnv)}
			}
			dir, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			db, err := openStateDB(url, false)
			if err != nil {
				return err
			}
			defer db.Close()
			if into {
				return importState(e, db, dir)
			}
			return exportState(e, db, dir)
		},
	}
	addStateFlag(cmd, &state)
	return cmd
}

func importState(e *env, db *pgstate.DB, dir string) error {
	ctx := context.Background()
	st, err := pin.Open(dir)
	if err != nil {
		return fmt.Errorf("opening %s: %w", dir, err)
	}
	snap, err := st.Snapshot()
	if err != nil {
		return storeError(err)
	}
	lines, headSeq, headHash, err := audit.ReadAll(dir)
	if err != nil {
		return err
	}
	noPins, noAudit, err := db.Empty(ctx)
	if err != nil {
		return err
	}
	if !noPins || !noAudit {
		return withHint(fmt.Errorf("%w: %s", pgstate.ErrNotEmpty, db.Name()), "import into a freshly migrated database; chains cannot be merged")
	}
	if err := db.ImportPins(ctx, snap); err != nil {
		return err
	}
	if err := db.ImportAudit(ctx, lines, headSeq, headHash); err != nil {
		return fmt.Errorf("the pins were imported, the audit log was not: %w", err)
	}
	return reportMoved(e, db.Pins(), db, nil, "imported", dir, db.Name(), len(snap.Records), len(lines))
}

func exportState(e *env, db *pgstate.DB, dir string) error {
	ctx := context.Background()
	snap, err := db.Pins().Snapshot()
	if err != nil {
		return storeError(err)
	}
	lines, headSeq, headHash, err := db.ExportAudit(ctx)
	if err != nil {
		return err
	}
	st, err := pin.Restore(dir, snap)
	if err != nil {
		return err
	}
	if err := audit.WriteAll(dir, lines, headSeq, headHash); err != nil {
		return fmt.Errorf("the pins were exported, the audit log was not: %w", err)
	}
	return reportMoved(e, st, nil, &dir, "exported", db.Name(), dir, len(snap.Records), len(lines))
}

// reportMoved verifies what was written and says so.
func reportMoved(e *env, st *pin.Store, db *pgstate.DB, home *string, what, from, to string, servers, events int) error {
	rep, err := st.Verify()
	if err != nil {
		return err
	}
	if !rep.OK() || rep.Servers != servers {
		return fmt.Errorf("the copy in %s does not verify: %d of %d servers, %d faults", to, rep.Servers, servers, len(rep.Faults))
	}
	var arep *audit.Report
	if db != nil {
		arep, err = db.VerifyAudit(context.Background())
	} else {
		arep, err = audit.Verify(*home)
	}
	if err != nil {
		return err
	}
	if !arep.OK() || arep.Events != int64(events) {
		return errors.New("the copied audit log does not verify")
	}
	fmt.Fprintf(e.stdout, "%s %s → %s: %d servers (%d events), %d audit events; both verify\n", what, from, to, servers, rep.Events, events)
	return nil
}
