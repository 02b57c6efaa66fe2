package tlog

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/mcpseal/mcpseal/contract"
)

// MaxVerifySize is the largest tree Verify will rebuild: it holds every
// stored hash in memory (64 bytes an entry), 4 GiB at this size.
const MaxVerifySize = 1 << 26

// maxFaults bounds the faults one verification reports.
const maxFaults = 100

// VerifyOptions says what Verify checks against.
type VerifyOptions struct {
	// Key is the pinned verifier key of the log. Required.
	Key note.Verifier
	// Witnesses are the witness keys whose cosignatures are checked when
	// present; Quorum of them must have cosigned.
	Witnesses []note.Verifier
	Quorum    int
	// Seen, when set, holds the last checkpoint this verifier accepted:
	// the log must extend it, and a verified log's checkpoint replaces it.
	Seen SeenStore
	// Prove lists entry indexes whose inclusion proofs are built from the
	// tiles and checked against the signed root.
	Prove []int64
}

// A Verified log: everything in it was checked.
type Verified struct {
	Checkpoint *SignedCheckpoint
	// Entries holds every entry's bytes and Parsed its decoded form.
	Entries [][]byte
	Parsed  []*Entry
	// Previous is the checkpoint this verifier had accepted before, nil if
	// none.
	Previous *SignedCheckpoint
	// Notes are facts worth telling that are not faults (tiles a crashed
	// writer left beyond the checkpoint).
	Notes    []string
	hashes   memHashes
	byServer map[string][]int
}

// A Fault is one thing wrong with a log folder.
type Fault struct {
	// Path is the file at fault, "" for the log as a whole.
	Path string `json:"path"`
	// Reason is a stable code: missing, mismatch, malformed, unexpected,
	// root-mismatch, definition-missing, definition-mismatch, too-large.
	Reason string `json:"reason"`
}

// A VerifyError lists every fault found.
type VerifyError struct{ Faults []Fault }

func (e *VerifyError) Error() string {
	var parts []string
	for i, f := range e.Faults {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Faults)-5))
			break
		}
		if f.Path == "" {
			parts = append(parts, f.Reason)
		} else {
			parts = append(parts, f.Path+": "+f.Reason)
		}
	}
	return "tlog: the log does not verify: " + strings.Join(parts, "; ")
}

type verifier struct {
	st     Storage
	faults []Fault
}

func (v *verifier) fault(path, reason string) {
	if len(v.faults) < maxFaults {
		v.faults = append(v.faults, Fault{Path: path, Reason: reason})
	}
}

func (v *verifier) err() error {
	if len(v.faults) == 0 {
		return nil
	}
	return &VerifyError{Faults: v.faults}
}

// Verify checks the log in st: see the package documentation. The error
// is a *SignatureError, a *VerifyError, a *ForkError, or an I/O error.
func Verify(st Storage, opts VerifyOptions) (*Verified, error) {
	msg, err := st.ReadFile(CheckpointFile, MaxCheckpointNote)
	if err != nil {
		return nil, fmt.Errorf("reading the checkpoint: %w", err)
	}
	cp, err := OpenCheckpoint(msg, opts.Key, opts.Witnesses, opts.Quorum)
	if err != nil {
		return nil, err
	}
	if cp.Size > MaxVerifySize {
		return nil, &VerifyError{Faults: []Fault{{Path: CheckpointFile, Reason: "too-large"}}}
	}
	v := &verifier{st: st}
	out := &Verified{Checkpoint: cp}
	v.readEntries(cp.Size, out)
	if err := v.err(); err != nil {
		return nil, err
	}
	if root, err := rootOf(cp.Size, out.hashes); err != nil || root != cp.Root {
		v.fault("", "root-mismatch")
		return nil, v.err()
	}
	v.checkTiles(cp.Size, out)
	v.checkDefs(out.Parsed)
	if err := v.err(); err != nil {
		return nil, err
	}
	for _, i := range opts.Prove {
		if err := proveFromTiles(st, cp.Checkpoint, i, out.Entries); err != nil {
			return nil, err
		}
	}
	if opts.Seen != nil {
		prev, err := opts.Seen.Load(opts.Key)
		if err != nil {
			return nil, err
		}
		if prev != nil {
			if err := checkExtends(prev, cp, out.hashes); err != nil {
				return nil, err
			}
		}
		out.Previous = prev
		if err := opts.Seen.Store(opts.Key, cp); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readEntries reads every bundle of a tree of size n, parses each entry
// and computes the stored hashes.
func (v *verifier) readEntries(n int64, out *Verified) {
	out.hashes = make(memHashes, 0, tlog.StoredHashCount(n))
	for b := int64(0); b*EntryBundleSize < n; b++ {
		w := int(min(n-b*EntryBundleSize, EntryBundleSize))
		p := TilePath(bundleTile(b, w))
		data, err := v.st.ReadFile(p, maxBundleSize)
		if err != nil {
			v.fault(p, readReason(err))
			return
		}
		entries, err := ParseBundle(data, w)
		if err != nil {
			v.fault(p, "malformed")
			return
		}
		for _, e := range entries {
			pe, err := ParseEntry(e)
			if err != nil {
				v.fault(p, "malformed")
				return
			}
			hs, _ := tlog.StoredHashes(int64(len(out.Entries)), e, out.hashes)
			out.hashes = append(out.hashes, hs...)
			out.Entries = append(out.Entries, e)
			out.Parsed = append(out.Parsed, pe)
		}
	}
}

func readReason(err error) string {
	switch {
	case isNotExist(err):
		return "missing"
	case errors.Is(err, ErrTooLarge):
		return "too-large"
	}
	return "unreadable"
}

// checkTiles compares every tile the tree needs, and every tile file
// present, with the tiles recomputed from the entries.
func (v *verifier) checkTiles(n int64, out *Verified) {
	need := map[string]bool{}
	for _, t := range tlog.NewTiles(TileHeight, 0, n) {
		need[TilePath(t)] = true
	}
	files, err := v.st.List("tile")
	if err != nil {
		v.fault("tile", "unreadable")
		return
	}
	for _, p := range files {
		delete(need, p)
		t, err := ParseTilePath(p)
		if err != nil {
			v.fault(p, "unexpected")
			continue
		}
		if t.L == -1 {
			v.checkBundleFile(p, t, n, out)
			continue
		}
		if (t.N<<TileHeight)+int64(t.W) > n>>(uint(t.L)*TileHeight) {
			out.Notes = append(out.Notes, p+" is beyond the checkpoint and was not checked")
			continue
		}
		want, err := tlog.ReadTileData(t, out.hashes)
		got, rerr := v.st.ReadFile(p, int64(len(want)))
		switch {
		case err != nil:
			v.fault(p, "unexpected")
		case rerr != nil:
			v.fault(p, readReason(rerr))
		case !bytes.Equal(got, want):
			v.fault(p, "mismatch")
		}
	}
	for p := range need {
		v.fault(p, "missing")
	}
}

// checkBundleFile checks a bundle file other than the ones readEntries
// read (a partial bundle of an earlier size): it must hold the same
// entries.
func (v *verifier) checkBundleFile(p string, t Tile, n int64, out *Verified) {
	start := t.N * EntryBundleSize
	if start+int64(t.W) > n {
		out.Notes = append(out.Notes, p+" is beyond the checkpoint and was not checked")
		return
	}
	var want []byte
	for _, e := range out.Entries[start : start+int64(t.W)] {
		want = appendBundleEntry(want, e)
	}
	got, err := v.st.ReadFile(p, int64(len(want)))
	switch {
	case err != nil:
		v.fault(p, readReason(err))
	case !bytes.Equal(got, want):
		v.fault(p, "mismatch")
	}
}

// checkDefs checks that every definition and instructions text an entry
// names is stored and matches, and that every stored blob is named by its
// digest.
func (v *verifier) checkDefs(entries []*Entry) {
	checked := map[string]bool{}
	for _, e := range entries {
		for _, k := range contract.Kinds {
			for _, ref := range e.Definitions[k] {
				if checked[ref.Digest] {
					continue
				}
				checked[ref.Digest] = true
				b, err := ReadBlob(v.st, ref.Digest)
				if err != nil {
					v.fault(BlobPath(ref.Digest), defReason(err))
					continue
				}
				if d, err := contract.NewDefinition(k, b); err != nil || d.Name != ref.Name {
					v.fault(BlobPath(ref.Digest), "definition-mismatch")
				}
			}
		}
		if d := e.Digests.Instructions; d != nil && !checked[*d] {
			checked[*d] = true
			if _, err := ReadBlob(v.st, *d); err != nil {
				v.fault(BlobPath(*d), defReason(err))
			}
		}
	}
	files, err := v.st.List(defsDir)
	if err != nil {
		v.fault(defsDir, "unreadable")
		return
	}
	for _, p := range files {
		d, ok := parseBlobPath(p)
		if !ok {
			v.fault(p, "unexpected")
		} else if !checked[d] {
			if _, err := ReadBlob(v.st, d); err != nil {
				v.fault(p, defReason(err))
			}
		}
	}
}

func defReason(err error) string {
	if isNotExist(err) {
		return "definition-missing"
	}
	return "definition-mismatch"
}
