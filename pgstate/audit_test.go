package pgstate_test

import (
	"context"
	"testing"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/audit/audittest"
)

// dbAudit is one database's audit log for the contract suite; every
// Writer is a pool of its own, like a replica.
type dbAudit struct{ dsn string }

func (b dbAudit) Writer(t *testing.T) audittest.Writer { return openDB(t, b.dsn).Audit() }

func (b dbAudit) Verify(t *testing.T) *audit.Report {
	rep, err := openDB(t, b.dsn).VerifyAudit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func (b dbAudit) Tail(t *testing.T, n int) []audit.Event {
	es, _, err := openDB(t, b.dsn).TailAudit(context.Background(), n, "")
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func (b dbAudit) EditLine(t *testing.T, seq int64) {
	exec(t, b.dsn, `UPDATE mcpseal_audit_events SET line = convert_to(replace(convert_from(line, 'UTF8'), '"alpha"', '"alphb"'), 'UTF8') WHERE seq = $1`, seq)
}

func (b dbAudit) DeleteLine(t *testing.T, seq int64) {
	exec(t, b.dsn, `DELETE FROM mcpseal_audit_events WHERE seq = $1`, seq)
}

func (b dbAudit) CutEnd(t *testing.T, n int) {
	for range n {
		exec(t, b.dsn, `DELETE FROM mcpseal_audit_events WHERE seq = (SELECT max(seq) FROM mcpseal_audit_events)`)
	}
}

// TestAuditContract runs the audit log contract suite (the one the files
// pass) against PostgreSQL: one chain for every replica.
func TestAuditContract(t *testing.T) {
	t.Parallel()
	audittest.Run(t, func(t *testing.T) audittest.Backing { return dbAudit{dsn: freshDB(t)} })
}

// TestAuditRowRenumberedFailsVerify: a row moved to another seq (its line
// intact) is caught, though its line still chains.
func TestAuditRowRenumberedFailsVerify(t *testing.T) {
	t.Parallel()
	dsn := freshDB(t)
	b := dbAudit{dsn}
	if err := b.Writer(t).AppendAll([]audit.Event{{Op: audit.OpList, Outcome: audit.Allowed}}); err != nil {
		t.Fatal(err)
	}
	exec(t, dsn, `UPDATE mcpseal_audit_events SET seq = 7 WHERE seq = 1`)
	if rep := b.Verify(t); rep.OK() {
		t.Fatal("a renumbered row verified")
	}
}
