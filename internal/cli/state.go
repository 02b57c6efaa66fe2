package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/httpgw"
	"github.com/mcpseal/mcpseal/pgstate"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/tlog"
)

func init() { register(newStateCmd) }

// stateEnv names the shared state when --state is not given.
const stateEnv = "MCPSEAL_STATE"

// stateUsage is --state's help, the same on every command that takes it.
const stateUsage = "keep the state in this PostgreSQL database (postgres://user@host/db; password from PGPASSWORD or ~/.pgpass) instead of $MCPSEAL_HOME (default $" + stateEnv + ")"

func addStateFlag(cmd *cobra.Command, state *string) {
	cmd.Flags().StringVar(state, "state", "", stateUsage)
}

// stateURL returns the database the command's state lives in: --state,
// else $MCPSEAL_STATE; "" for the files under $MCPSEAL_HOME. Anything
// but a postgres:// URL is refused, never read as "use the files".
func stateURL(e *env, flag string) (string, error) {
	s := flag
	if s == "" {
		s = e.getenv(stateEnv)
	}
	if s != "" && !pgstate.IsURL(s) {
		return "", &usageError{withHint(errors.New("--state must be a postgres:// URL"), "unset %s to keep the state in $MCPSEAL_HOME", stateEnv)}
	}
	return s, nil
}

// openStateDB opens the state database. lazy lets a long-running command
// start while the database is unreachable (every check then fails, so
// every session is held, until it returns).
func openStateDB(url string, lazy bool) (*pgstate.DB, error) {
	db, err := pgstate.Open(context.Background(), url, pgstate.Options{Lazy: lazy})
	switch {
	case errors.Is(err, pgstate.ErrSchemaOld):
		return nil, withHint(err, "run 'mcpseal state migrate --state %s'", pgstate.Redact(url))
	case errors.Is(err, pgstate.ErrSchemaNewer):
		return nil, withHint(err, "a newer mcpseal migrated this database; run that version here too")
	case err != nil:
		return nil, err
	}
	return db, nil
}

// openStateStore opens the pin store: the database state names, else
// the files under $MCPSEAL_HOME. done releases it.
func openStateStore(e *env, state string) (*pin.Store, func(), error) {
	url, err := stateURL(e, state)
	if err != nil {
		return nil, nil, err
	}
	if url == "" {
		st, err := openStore(e)
		return st, func() {}, err
	}
	db, err := openStateDB(url, false)
	if err != nil {
		return nil, nil, err
	}
	return db.Pins(), db.Close, nil
}

func newStateCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "state",
		Short: "Manage the shared state database of a fleet",
		Long: `A fleet of gateway replicas (and, if a team wants, its laptops) can keep
pins, reviews, approvals and the event chain in one PostgreSQL database
instead of each machine's $MCPSEAL_HOME; see docs/fleet.md.`,
	}
	cmd.AddCommand(newStateMigrateCmd(e), newStateMoveCmd(e, true), newStateMoveCmd(e, false))
	return cmd
}

func newStateMigrateCmd(e *env) *cobra.Command {
	var state string
	cmd := &cobra.Command{
		Use:   "migrate --state postgres://...",
		Short: "Create or upgrade the state database's schema",
		Long: `Create the schema in the database --state names, or upgrade it to this
mcpseal's version. Running it again does nothing; running it from several
replicas at once is safe. A schema newer than this mcpseal is refused.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			url, err := stateURL(e, state)
			if err != nil {
				return err
			}
			if url == "" {
				return &usageError{fmt.Errorf("state migrate needs --state or $%s", stateEnv)}
			}
			from, to, err := pgstate.Migrate(context.Background(), url)
			if err != nil {
				if errors.Is(err, pgstate.ErrSchemaNewer) {
					return withHint(err, "a newer mcpseal migrated this database; run that version here too")
				}
				return err
			}
			if from == to {
				fmt.Fprintf(e.stdout, "%s: schema version %d, up to date\n", pgstate.Redact(url), to)
			} else {
				fmt.Fprintf(e.stdout, "%s: schema version %d → %d\n", pgstate.Redact(url), from, to)
			}
			return nil
		},
	}
	addStateFlag(cmd, &state)
	return cmd
}

// useStateDB makes the state database the baseline of a run session when
// --state or $MCPSEAL_STATE names one. A database that cannot be reached
// holds every check until it can; one whose schema is refused holds the
// session, as a tampered store does.
func (g *hostGuard) useStateDB(e *env, state string, logger *slog.Logger) error {
	url, err := stateURL(e, state)
	if err != nil || url == "" {
		return err
	}
	db, err := sharedStateDB(url, logger)
	if err != nil {
		logger.Error("state database unusable: every session is held", "state", pgstate.Redact(url), "err", err)
		g.baseline = heldStore{err}
		return nil
	}
	g.baseline = db.Pins()
	return nil
}

// stateDBs are the state databases this process opened for its sessions
// (the gateway's, run's), one per URL: every session shares its pool and
// its watcher. They live as long as the process.
var stateDBs struct {
	mu sync.Mutex
	m  map[string]*pgstate.DB
}

// sharedStateDB opens the state database url names once per process,
// lazily (a database down at start holds every check until it returns),
// and follows its changes.
func sharedStateDB(url string, logger *slog.Logger) (*pgstate.DB, error) {
	stateDBs.mu.Lock()
	defer stateDBs.mu.Unlock()
	if db := stateDBs.m[url]; db != nil {
		return db, nil
	}
	db, err := openStateDB(url, true)
	if err != nil {
		return nil, err
	}
	logger.Info("state database", "state", db.Name())
	db.Watch(logger)
	if stateDBs.m == nil {
		stateDBs.m = map[string]*pgstate.DB{}
	}
	stateDBs.m[url] = db
	return db, nil
}

// gatewayStore opens the gateway's pin store: the state database, else
// the files under $MCPSEAL_HOME. The gateway starts while the database is
// unreachable, holding every session until it returns; a schema it
// refuses stops it.
func gatewayStore(e *env, state string, logger *slog.Logger) (*pin.Store, func(), error) {
	url, err := stateURL(e, state)
	if err != nil {
		return nil, nil, err
	}
	if url == "" {
		home, err := pin.DefaultHome(e.getenv)
		if err != nil {
			return nil, nil, err
		}
		store, err := pin.Open(home)
		if err != nil {
			return nil, nil, withHint(err, "mcpseal keeps its pins in $MCPSEAL_HOME (default ~/.mcpseal)")
		}
		return store, func() {}, nil
	}
	db, err := sharedStateDB(url, logger)
	if err != nil {
		return nil, nil, err
	}
	return db.Pins(), func() {}, nil
}

// gatewayEnded is where the gateway records sealed session ids their
// client ended: the state database, so that every replica refuses them;
// nil (the process's memory) without one.
func gatewayEnded(e *env, state string, logger *slog.Logger) (httpgw.EndedSessions, error) {
	url, err := stateURL(e, state)
	if err != nil || url == "" {
		return nil, err
	}
	db, err := sharedStateDB(url, logger)
	if err != nil {
		return nil, err
	}
	return db.EndedSessions(), nil
}

// useStateSequences records the lock manifests a session accepts in the
// state database, when there is one, so that a rollback any replica
// refused is refused by every replica.
func useStateSequences(e *env, s *hostSpec, logger *slog.Logger) error {
	url, err := stateURL(e, s.state)
	if err != nil || url == "" {
		return err
	}
	db, err := sharedStateDB(url, logger)
	if err != nil {
		return err
	}
	s.lock.sequences = db.Sequences()
	return nil
}

// seenStore is where log verify keeps the checkpoints it accepted: the
// state database when state (or $MCPSEAL_STATE) names one, so that every
// machine of a fleet proves the log only grew since any of them looked;
// else $MCPSEAL_HOME/tlog/seen.
func seenStore(e *env, state, home string) (tlog.SeenStore, func(), error) {
	url, err := stateURL(e, state)
	if err != nil {
		return nil, nil, err
	}
	if url == "" {
		return tlog.SeenDir(home), func() {}, nil
	}
	db, err := openStateDB(url, false)
	if err != nil {
		return nil, nil, err
	}
	return db.Seen(), db.Close, nil
}
