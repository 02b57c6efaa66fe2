package gate

import (
	"crypto/sha256"

	"github.com/mcpseal/mcpseal/contract"
)

// maxSequences bounds the client listings followed at once; a client pages
// through one or two listings at a time.
const maxSequences = 64

// sequences follows the pages of the client's own listings, so that when a
// listing completes the gate can tell whether a pinned definition is gone.
type sequences struct {
	byCursor map[string]*sequence
	order    []string // insertion order, for eviction
}

type sequence struct {
	names map[string]bool
}

func newSequences() *sequences {
	return &sequences{byCursor: make(map[string]*sequence)}
}

// seqKey names a listing's next page. The cursor is the server's and of
// any length: its digest stands for it, so that the 64 sequences kept hold
// 64 short keys, not 64 cursors of a frame each (red team: 512 MiB held for
// the session's life).
func seqKey(profile string, k contract.Kind, cursor string) string {
	sum := sha256.Sum256([]byte(cursor))
	return profile + "\x00" + string(k) + "\x00" + string(sum[:])
}

// track records one page and returns the definitions of base missing from
// a listing that this page completed. A page reached through a cursor the
// gate did not follow is checked on its own (the caller does that) but
// cannot prove completeness.
func (q *sequences) track(profile string, k contract.Kind, cursor, next string, page []contract.Definition, base *contract.Contract) []contract.Definition {
	var seq *sequence
	if cursor == "" {
		seq = &sequence{names: make(map[string]bool)}
	} else {
		key := seqKey(profile, k, cursor)
		seq = q.byCursor[key]
		delete(q.byCursor, key)
	}
	if seq == nil {
		return nil
	}
	for _, d := range page {
		seq.names[d.Name] = true
	}
	if next != "" {
		q.put(seqKey(profile, k, next), seq)
		return nil
	}
	var removed []contract.Definition
	for _, d := range base.Defs[k] {
		if !seq.names[d.Name] {
			removed = append(removed, d)
		}
	}
	return removed
}

func (q *sequences) put(key string, seq *sequence) {
	if _, ok := q.byCursor[key]; !ok {
		q.order = append(q.order, key)
	}
	q.byCursor[key] = seq
	for len(q.byCursor) > maxSequences && len(q.order) > 0 {
		delete(q.byCursor, q.order[0])
		q.order = q.order[1:]
	}
	if len(q.order) > 4*maxSequences {
		// Compact keys already consumed.
		kept := q.order[:0]
		for _, k := range q.order {
			if _, ok := q.byCursor[k]; ok {
				kept = append(kept, k)
			}
		}
		q.order = kept
	}
}
