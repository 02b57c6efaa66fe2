package tlog

import (
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// tileReader reads hash tiles from storage for x/mod's TileHashReader,
// which checks every tile it loads against the signed tree. It keeps the
// tiles it read for the life of one operation.
type tileReader struct {
	st    Storage
	cache map[Tile][]byte
}

func newTileReader(st Storage) *tileReader {
	return &tileReader{st: st, cache: map[Tile][]byte{}}
}

func (r *tileReader) Height() int { return TileHeight }

func (r *tileReader) ReadTiles(tiles []Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		if b, ok := r.cache[t]; ok {
			out[i] = b
			continue
		}
		want := int64(t.W * tlog.HashSize)
		b, err := r.st.ReadFile(TilePath(t), want)
		if err != nil {
			return nil, err
		}
		if int64(len(b)) != want {
			return nil, fmt.Errorf("tlog: %s has %d bytes, want %d", TilePath(t), len(b), want)
		}
		out[i] = b
	}
	return out, nil
}

// SaveTiles is called for tiles that verified: only those are kept.
func (r *tileReader) SaveTiles(tiles []Tile, data [][]byte) {
	for i, t := range tiles {
		r.cache[t] = data[i]
	}
}

// treeReader returns a HashReader for the signed tree c whose every hash
// is proven to be in the tree.
func treeReader(st Storage, c Checkpoint) tlog.HashReader {
	return tlog.TileHashReader(tlog.Tree{N: c.Size, Hash: c.Root}, newTileReader(st))
}

// memHashes is the stored hashes of a whole tree, in storage order.
type memHashes []Hash

func (m memHashes) ReadHashes(indexes []int64) ([]Hash, error) {
	out := make([]Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(m)) {
			return nil, fmt.Errorf("tlog: hash %d is not stored", x)
		}
		out[i] = m[x]
	}
	return out, nil
}

// extendedReader serves the hashes of an old tree from old and the hashes
// stored after it from added.
type extendedReader struct {
	old      tlog.HashReader
	oldCount int64
	added    []Hash
}

func (r *extendedReader) ReadHashes(indexes []int64) ([]Hash, error) {
	out := make([]Hash, len(indexes))
	var oldIdx []int64
	var oldPos []int
	for i, x := range indexes {
		switch {
		case x < r.oldCount:
			oldIdx = append(oldIdx, x)
			oldPos = append(oldPos, i)
		case x-r.oldCount < int64(len(r.added)):
			out[i] = r.added[x-r.oldCount]
		default:
			return nil, fmt.Errorf("tlog: hash %d is not stored yet", x)
		}
	}
	if len(oldIdx) > 0 {
		hs, err := r.old.ReadHashes(oldIdx)
		if err != nil {
			return nil, err
		}
		for j, p := range oldPos {
			out[p] = hs[j]
		}
	}
	return out, nil
}

// rootOf returns the root of the first n entries (the SHA-256 of nothing
// for n = 0, RFC 6962).
func rootOf(n int64, r tlog.HashReader) (Hash, error) {
	if n == 0 {
		return emptyRoot, nil
	}
	return tlog.TreeHash(n, r)
}
