package tlog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// A Writer appends entries to a log it holds the signing key of.
type Writer struct {
	st     Storage
	signer note.Signer
	key    note.Verifier
}

// NewWriter returns a writer for the log in st, signing with signer
// (whose verifier is key).
func NewWriter(st Storage, signer note.Signer, key note.Verifier) *Writer {
	return &Writer{st: st, signer: signer, key: key}
}

// Key returns the verifier of the log's signing key.
func (w *Writer) Key() note.Verifier { return w.key }

// ErrExists reports a log folder that already holds a checkpoint.
var ErrExists = errors.New("tlog: the folder already holds a log")

// Init writes the checkpoint of the empty log.
func (w *Writer) Init() (*SignedCheckpoint, error) {
	unlock, err := lockStorage(w.st)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := w.st.ReadFile(CheckpointFile, MaxCheckpointNote); err == nil {
		return nil, ErrExists
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return w.publish(Checkpoint{Origin: w.signer.Name(), Size: 0, Root: emptyRoot})
}

// Current reads and checks the log's checkpoint.
func (w *Writer) Current() (*SignedCheckpoint, error) {
	msg, err := w.st.ReadFile(CheckpointFile, MaxCheckpointNote)
	if err != nil {
		return nil, err
	}
	return OpenCheckpoint(msg, w.key, nil, 0)
}

// Append adds entries (each must pass ParseEntry) after the checkpoint,
// writes the entry bundles and hash tiles they fill, and publishes a new
// signed checkpoint. It returns the new checkpoint; the entries' indexes
// are its Size minus len(entries) onwards. Files beyond the old checkpoint
// that a crash left behind are overwritten.
func (w *Writer) Append(entries [][]byte) (*SignedCheckpoint, error) {
	for i, e := range entries {
		if _, err := ParseEntry(e); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
	}
	unlock, err := lockStorage(w.st)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cur, err := w.Current()
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return cur, nil
	}
	n := cur.Size
	r := &extendedReader{old: treeReader(w.st, cur.Checkpoint), oldCount: tlog.StoredHashCount(n)}
	for i, e := range entries {
		hs, err := tlog.StoredHashes(n+int64(i), e, r)
		if err != nil {
			return nil, err
		}
		r.added = append(r.added, hs...)
	}
	newN := n + int64(len(entries))
	if err := w.writeBundles(n, entries, r); err != nil {
		return nil, err
	}
	for _, t := range tlog.NewTiles(TileHeight, n, newN) {
		data, err := tlog.ReadTileData(t, r)
		if err != nil {
			return nil, err
		}
		if err := w.st.WriteFile(TilePath(t), data); err != nil {
			return nil, err
		}
	}
	root, err := rootOf(newN, r)
	if err != nil {
		return nil, err
	}
	return w.publish(Checkpoint{Origin: cur.Origin, Size: newN, Root: root})
}

// writeBundles writes the entry bundles that entries, appended after the
// first n, fill or start. The entries already in the last partial bundle
// are read back and checked against the tree first.
func (w *Writer) writeBundles(n int64, entries [][]byte, r tlog.HashReader) error {
	b := n / EntryBundleSize
	var bundle []byte
	if have := int(n % EntryBundleSize); have > 0 {
		data, err := w.st.ReadFile(TilePath(bundleTile(b, have)), maxBundleSize)
		if err != nil {
			return err
		}
		prev, err := ParseBundle(data, have)
		if err != nil {
			return err
		}
		idx := make([]int64, len(prev))
		for i := range prev {
			idx[i] = tlog.StoredHashIndex(0, b*EntryBundleSize+int64(i))
		}
		hs, err := r.ReadHashes(idx)
		if err != nil {
			return err
		}
		for i, e := range prev {
			if hs[i] != RecordHash(e) {
				return fmt.Errorf("tlog: entry %d in its bundle does not match the tree", b*EntryBundleSize+int64(i))
			}
		}
		bundle = bytes.Clone(data)
	}
	count := int(n % EntryBundleSize)
	for _, e := range entries {
		bundle = appendBundleEntry(bundle, e)
		count++
		if count == EntryBundleSize {
			if err := w.st.WriteFile(TilePath(bundleTile(b, count)), bundle); err != nil {
				return err
			}
			b, count, bundle = b+1, 0, nil
		}
	}
	if count > 0 {
		return w.st.WriteFile(TilePath(bundleTile(b, count)), bundle)
	}
	return nil
}

func (w *Writer) publish(c Checkpoint) (*SignedCheckpoint, error) {
	msg, err := SignCheckpoint(c, w.signer)
	if err != nil {
		return nil, err
	}
	if err := w.st.WriteFile(CheckpointFile, msg); err != nil {
		return nil, err
	}
	return &SignedCheckpoint{Checkpoint: c, Note: msg}, nil
}

// ReplaceCheckpoint writes msg, which must be the current checkpoint with
// more signatures (witness cosignatures), as the log's checkpoint.
func (w *Writer) ReplaceCheckpoint(msg []byte, witnesses []note.Verifier) error {
	unlock, err := lockStorage(w.st)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := w.Current()
	if err != nil {
		return err
	}
	next, err := OpenCheckpoint(msg, w.key, witnesses, 0)
	if err != nil {
		return err
	}
	if next.Checkpoint != cur.Checkpoint {
		return errors.New("tlog: not the current checkpoint")
	}
	return w.st.WriteFile(CheckpointFile, msg)
}

// lockStorage takes the writer's lock when st supports one.
func lockStorage(st Storage) (func(), error) {
	if l, ok := st.(interface{ Lock() (func(), error) }); ok {
		return l.Lock()
	}
	return func() {}, nil
}
