package tlog

import (
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// A ForkError reports a log that does not extend the last checkpoint this
// verifier accepted: both checkpoints, each validly signed by the log's
// key, are the evidence that the log served two histories.
type ForkError struct {
	// Reason is "same-size-different-root", "shrunk" or "rewritten" (the
	// new tree's first Seen.Size entries hash to another root).
	Reason string
	Seen   *SignedCheckpoint
	Got    *SignedCheckpoint
}

func (e *ForkError) Error() string {
	return fmt.Sprintf("tlog: fork: %s: accepted before %s, now %s", e.Reason, e.Seen.Checkpoint, e.Got.Checkpoint)
}

// checkExtends checks that got (whose tree's stored hashes are hashes)
// extends seen, with x/mod's own consistency proof check as a cross-check.
func checkExtends(seen, got *SignedCheckpoint, hashes tlog.HashReader) error {
	fork := func(reason string) error { return &ForkError{Reason: reason, Seen: seen, Got: got} }
	switch {
	case got.Size < seen.Size:
		return fork("shrunk")
	case got.Size == seen.Size:
		if got.Root != seen.Root {
			return fork("same-size-different-root")
		}
		return nil
	}
	old, err := rootOf(seen.Size, hashes)
	if err != nil || old != seen.Root {
		return fork("rewritten")
	}
	if seen.Size == 0 {
		return nil
	}
	p, err := tlog.ProveTree(got.Size, seen.Size, hashes)
	if err != nil {
		return err
	}
	if err := tlog.CheckTree(p, got.Size, got.Root, seen.Size, seen.Root); err != nil {
		return fork("rewritten")
	}
	return nil
}

// An InclusionProof proves that the entry at Index is in the tree of the
// checkpoint: tlog.CheckRecord(Proof, Size, Root, Index, Leaf) accepts it.
type InclusionProof struct {
	Index int64
	Size  int64
	Root  Hash
	Leaf  Hash
	Proof []Hash
}

// Prove returns the inclusion proof of entry i in the tree c, built from
// the tiles in st (each checked against c's root as it is read).
func Prove(st Storage, c Checkpoint, i int64, entry []byte) (*InclusionProof, error) {
	if i < 0 || i >= c.Size {
		return nil, fmt.Errorf("tlog: entry %d is not in a tree of %d entries", i, c.Size)
	}
	p, err := tlog.ProveRecord(c.Size, i, treeReader(st, c))
	if err != nil {
		return nil, err
	}
	ip := &InclusionProof{Index: i, Size: c.Size, Root: c.Root, Leaf: RecordHash(entry), Proof: p}
	if err := tlog.CheckRecord(p, c.Size, c.Root, i, ip.Leaf); err != nil {
		return nil, fmt.Errorf("tlog: entry %d is not in the signed tree: %w", i, err)
	}
	return ip, nil
}

func proveFromTiles(st Storage, c Checkpoint, i int64, entries [][]byte) error {
	if i < 0 || i >= int64(len(entries)) {
		return fmt.Errorf("tlog: entry %d is not in a tree of %d entries", i, len(entries))
	}
	_, err := Prove(st, c, i, entries[i])
	return err
}

// ReadEntry returns the bytes of entry i of a tree of size n from its
// bundle (not checked: prove it before trusting it).
func ReadEntry(st Storage, n, i int64) ([]byte, error) {
	if i < 0 || i >= n {
		return nil, fmt.Errorf("tlog: entry %d is not in a tree of %d entries", i, n)
	}
	b := i / EntryBundleSize
	w := int(min(n-b*EntryBundleSize, EntryBundleSize))
	data, err := st.ReadFile(TilePath(bundleTile(b, w)), maxBundleSize)
	if err != nil {
		return nil, err
	}
	es, err := ParseBundle(data, w)
	if err != nil {
		return nil, err
	}
	return es[i%EntryBundleSize], nil
}
