package tlog

import (
	"errors"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// A Tile names one hash tile (L ≥ 0) or entry bundle (L = -1) of height
// TileHeight. It is x/mod's tlog.Tile with H fixed.
type Tile = tlog.Tile

// ErrBadPath reports a tile path that is not the canonical path of a tile.
var ErrBadPath = errors.New("tlog: not a canonical tile path")

// maxTilePath bounds a tile path before it is parsed: the longest
// canonical path (level 63, an index of 2^63, a partial width) is under
// 60 bytes.
const maxTilePath = 96

// maxTileLevel is the highest tile level of a tree of fewer than 2^63
// entries.
const maxTileLevel = 7

// TilePath returns the C2SP tlog-tiles path of t: tile/<L>/<N>[.p/<W>] for
// hash tiles and tile/entries/<N>[.p/<W>] for entry bundles.
func TilePath(t Tile) string {
	p := t.Path() // tile/8/<L or data>/<N>[.p/<W>]
	rest := strings.TrimPrefix(p, "tile/8/")
	if strings.HasPrefix(rest, "data/") {
		return "tile/entries/" + strings.TrimPrefix(rest, "data/")
	}
	return "tile/" + rest
}

// ParseTilePath parses a C2SP tile path. It accepts only the canonical
// path of a tile of height TileHeight: it re-encodes the tile and compares
// (so "tile/0/01", "tile/0/x000/001" and "tile/0/000.p/256" are refused).
func ParseTilePath(path string) (Tile, error) {
	if len(path) > maxTilePath || !strings.HasPrefix(path, "tile/") {
		return Tile{}, ErrBadPath
	}
	rest := path[len("tile/"):]
	var sumdbPath string
	switch {
	case strings.HasPrefix(rest, "entries/"):
		sumdbPath = "tile/8/data/" + rest[len("entries/"):]
	case strings.HasPrefix(rest, "data/"):
		return Tile{}, ErrBadPath
	default:
		sumdbPath = "tile/8/" + rest
	}
	t, err := tlog.ParseTilePath(sumdbPath)
	// Level 8 would hold hashes of 2^64 entries: no tree is that large.
	if err != nil || t.H != TileHeight || t.L > maxTileLevel || TilePath(t) != path {
		return Tile{}, ErrBadPath
	}
	return t, nil
}

// bundleTile returns the entry bundle that holds entries
// [n*256, n*256+w).
func bundleTile(n int64, w int) Tile {
	return Tile{H: TileHeight, L: -1, N: n, W: w}
}
