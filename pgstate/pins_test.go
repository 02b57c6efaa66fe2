package pgstate_test

import (
	"testing"

	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/pin/pintest"
)

// dbBacking is one database for the contract suite; every Open is a pool
// of its own, like a replica.
type dbBacking struct{ dsn string }

func (b dbBacking) Open(t *testing.T) *pin.Store { return openDB(t, b.dsn).Pins() }

func (b dbBacking) EditRecord(t *testing.T, id string) {
	exec(t, b.dsn, `UPDATE mcpseal_pin_records SET data = convert_to(replace(convert_from(data, 'UTF8'), '"label"', '"label" '), 'UTF8') WHERE id = $1`, id)
}

func (b dbBacking) DeleteEvent(t *testing.T, seq int64) {
	exec(t, b.dsn, `DELETE FROM mcpseal_pin_events WHERE seq = $1`, seq)
}

func (b dbBacking) AppendEvent(t *testing.T, line []byte) {
	exec(t, b.dsn, `INSERT INTO mcpseal_pin_events (seq, line) SELECT coalesce(max(seq), 0) + 1, $1 FROM mcpseal_pin_events`, line)
}

func (b dbBacking) ReadRecord(t *testing.T, id string) []byte {
	var data []byte
	queryRow(t, b.dsn, `SELECT data FROM mcpseal_pin_records WHERE id = $1`, []any{id}, &data)
	return data
}

func (b dbBacking) WriteRecord(t *testing.T, id string, data []byte) {
	exec(t, b.dsn, `UPDATE mcpseal_pin_records SET data = $2 WHERE id = $1`, id, data)
}

func (b dbBacking) PlantRecord(t *testing.T, id string, data []byte) {
	exec(t, b.dsn, `INSERT INTO mcpseal_pin_records (id, data) VALUES ($1, $2)`, id, data)
}

// TestStoreContract runs the pin store contract suite (the one the file
// store passes) against PostgreSQL.
func TestStoreContract(t *testing.T) {
	t.Parallel()
	pintest.Run(t, pintest.Suite{New: func(t *testing.T) pintest.Backing { return dbBacking{dsn: freshDB(t)} }, Fleet: true})
}
