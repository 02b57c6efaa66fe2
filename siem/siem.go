// Package siem ships mcpseal's audit chain to the systems a security team
// watches: syslog (RFC 5424 over TCP with TLS, RFC 5425 framing) and an
// HTTP webhook (batched JSON, signed with HMAC-SHA256 or Ed25519).
//
// # What is sent
//
// The audit events exactly as chained: each line's bytes as the audit log
// holds them, with its position (seq) and hashes, so that a receiver can
// detect a gap (a seq missing), a rewrite (bytes that differ from the
// local chain, or a prev that does not chain) and replay (a seq seen
// twice). `mcpseal audit verify --stream FILE` checks a receiver's copy
// against the local chain. The events hold no content (package audit);
// shipping them adds none.
//
// # Delivery
//
// At least once, in chain order. The audit log itself is the spool: each
// sink keeps a cursor (the last seq the sink acknowledged) and ships what
// follows it. Where the chain and the cursors live is a Source: the files
// (FileSource: cursors under $MCPSEAL_HOME/audit/export/SINK/) or the
// fleet's database (pgstate.AuditExport: a row per sink). Several
// mcpseal processes append to one log; one of them at a time ships for a
// sink (an exclusive lock on the sink's folder, or the database row's
// lease), the others take over when it exits. A sink that is down loses nothing and slows no call:
// shipping runs on its own goroutine, retried with backoff, and the
// cursor only moves after the sink took a batch. Receivers de-duplicate
// by seq.
//
// The spool is bounded: when more than SpoolEvents events wait for a
// sink, or rotation pruned events it never took, the spool is full. That
// is reported on stderr and, when the host policy requires the audit log,
// every call is refused (audit-unavailable) until the sink catches up:
// an operation whose audit record cannot reach the SIEM does not happen.
//
// # Batch (webhook body)
//
//	{"v":1,"type":"mcpseal-audit-batch","sink":"NAME","first":41,"last":42,
//	 "prev":"<hash of event 40>","hash":"<hash of event 42>","count":2,
//	 "events":[<line 41>,<line 42>]}
//
// with headers X-Mcpseal-Batch: 41-42 and X-Mcpseal-Signature:
// hmac-sha256=<hex> or ed25519=<base64>, over the exact body bytes.
//
// # Syslog message
//
//	<PRI>1 TIMESTAMP HOST mcpseal PID OP [mcpseal@32473 seq="41" prev="…" hash="…"] <line 41>
//
// PRI is facility local0 (16) with severity notice for refusals, drifts
// and withheld definitions and informational otherwise. 32473 is the
// private enterprise number RFC 5612 reserves for documentation; the
// structured data id is stable.
package siem

import (
	"strconv"

	"github.com/mcpseal/mcpseal/audit"
)

// BatchType is the type member of a webhook batch.
const BatchType = "mcpseal-audit-batch"

// encodeBatch writes the batch body; the lines are embedded unchanged.
func encodeBatch(sink string, lines []audit.Line) []byte {
	first, last := lines[0], lines[len(lines)-1]
	n := 200
	for _, l := range lines {
		n += len(l.Raw) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"v":1,"type":"`+BatchType+`","sink":"`...)
	b = append(b, sink...) // a sink name is [a-z0-9-]
	b = append(b, `","first":`...)
	b = strconv.AppendInt(b, first.Seq, 10)
	b = append(b, `,"last":`...)
	b = strconv.AppendInt(b, last.Seq, 10)
	b = append(b, `,"prev":"`...)
	b = append(b, first.Prev...)
	b = append(b, `","hash":"`...)
	b = append(b, last.Hash...)
	b = append(b, `","count":`...)
	b = strconv.AppendInt(b, int64(len(lines)), 10)
	b = append(b, `,"events":[`...)
	for i, l := range lines {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, l.Raw...)
	}
	return append(b, "]}"...)
}
