package pgstate

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Ended sealed session ids (docs/fleet.md, "Sessions across replicas").
// A client that ends its session with DELETE must get 404 for the id
// afterwards on every replica, yet a sealed id opens anywhere until it
// expires. Each replica therefore records the ids it ended in
// mcpseal_ended_sessions, by a digest of the id's local session id, until
// the id's own expiry, and a replica about to continue a session it does
// not hold asks here first. Rows past their expiry are deleted whenever
// an id is ended, so the table holds at most the ids ended in the last
// sessionid.MaxAge.

// EndedSessions is the fleet's record of ended sealed session ids
// (httpgw.EndedSessions).
type EndedSessions struct{ d *DB }

// EndedSessions returns the database's record of ended sealed ids.
func (d *DB) EndedSessions() *EndedSessions { return &EndedSessions{d: d} }

// End records that the session id names (a digest: httpgw never passes
// the id itself) ended, until expires.
func (e *EndedSessions) End(id string, expires time.Time) error {
	d := e.d
	ctx, tx, done, err := d.begin(context.Background(), 1, pgx.TxOptions{}, "recording an ended session", "")
	if err != nil {
		return err
	}
	defer done()
	if _, err := tx.Exec(ctx, `DELETE FROM mcpseal_ended_sessions WHERE expires < now()`); err != nil {
		return d.fault("recording an ended session", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO mcpseal_ended_sessions (id, expires) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET expires = greatest(mcpseal_ended_sessions.expires, EXCLUDED.expires)`, id, expires.UTC()); err != nil {
		return d.fault("recording an ended session", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return d.fault("recording an ended session", err)
	}
	return nil
}

// Ended reports whether the session id names was ended.
func (e *EndedSessions) Ended(id string) (bool, error) {
	d := e.d
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel()
	if err := d.check(ctx); err != nil {
		return false, err
	}
	var ended bool
	if err := d.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mcpseal_ended_sessions WHERE id = $1)`, id).Scan(&ended); err != nil {
		return false, d.fault("reading ended sessions", err)
	}
	return ended, nil
}
