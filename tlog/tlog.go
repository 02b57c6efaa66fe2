// Package tlog is mcpseal's public transparency log of MCP server
// contracts: a tiled Merkle log in the C2SP tlog-tiles layout, with
// checkpoints as C2SP signed notes (Ed25519), built on Go's checksum
// database packages golang.org/x/mod/sumdb/tlog and .../note.
//
// # What the log holds
//
// Each entry is one observation of one server's contract: the server's
// identity and source, the package and exact version when the server came
// from a registry, when it was observed, the digest of the whole contract,
// the set digest of every kind, the instructions digest and the digest of
// every definition (see docs/contract-digest.md). The canonical definitions
// themselves sit beside the tiles, content-addressed by their digests.
// An entry is appended only when a server's contract differs from its
// latest entry: the log records changes, not heartbeats. When the crawler
// last checked a server (liveness) lives outside the log, in
// liveness.json, which nothing signs.
//
// # Layout of a log folder
//
//	checkpoint                 the latest signed checkpoint (C2SP tlog-checkpoint)
//	tile/<L>/<N>[.p/<W>]       hash tiles of height 8 (C2SP tlog-tiles)
//	tile/entries/<N>[.p/<W>]   entry bundles: 256 entries, each a big-endian
//	                           uint16 length and the entry's bytes
//	defs/<hh>/<digest>         canonical definitions and instructions, by
//	                           the SHA-256 of their bytes (hh: its first two hex)
//	liveness.json              when each server was last checked (unsigned)
//	.lock                      the writer's lock (not part of the log)
//
// <N> is written three digits at a time with "x" before every group but the
// last (1234067 is x001/x234/067), as in tlog-tiles. The signing key never
// lives in the folder: it is kept under $MCPSEAL_HOME/keys/ (see Keys).
//
// # Checkpoint
//
// A checkpoint is the note
//
//	<origin>
//	<tree size, decimal>
//	<root hash, standard base64>
//
//	— <origin> <base64 of key hash and Ed25519 signature>
//	— <witness> <base64 of key hash, timestamp and Ed25519 cosignature>
//
// signed by the log's key, whose name is the origin. Witnesses may add
// cosignatures (C2SP tlog-cosignature, "cosignature/v1"); a verifier that
// knows a witness's key checks its cosignature, and may require a quorum.
// The root of the empty tree is the SHA-256 of nothing (RFC 6962).
//
// # Entry
//
// An entry is one JSON object in RFC 8785 canonical form, at most 65535
// bytes (the bundle's length prefix). For example, laid out for reading:
//
//	{
//	  "contract": "8c1f…",
//	  "definitions": {
//	    "prompts": [],
//	    "resourceTemplates": [],
//	    "resources": [],
//	    "tools": [{"digest": "3b0e…", "name": "get_weather"}]
//	  },
//	  "instructions": null,
//	  "observed": "2026-11-02T09:00:00Z",
//	  "package": {"integrity": "sha512-…", "name": "weather-mcp", "version": "1.2.0"},
//	  "protocol": "2025-06-18",
//	  "server": "npm:weather-mcp",
//	  "sets": {"prompts": "e3b0…", "resourceTemplates": "e3b0…", "resources": "e3b0…", "tools": "9f2a…"},
//	  "since": "2026-11-01T09:00:00Z",
//	  "type": "mcpseal.observation/v1"
//	}
//
// "since" is the last time the previous contract was seen (null in a
// server's first entry): the change happened after it. Every field is
// checked when an entry is read: the sets and the contract digest must
// follow from the definitions, lists must be sorted, times are UTC
// seconds, and the bytes must be exactly the canonical encoding of what
// they decode to. See Entry and ParseEntry.
//
// # Verifying
//
// Verify checks a downloaded log folder against a pinned verifier key
// (never a key that comes with the download): the checkpoint's signature,
// every entry bundle and every tile (recomputed from the entries), every
// stored definition, and, with a Seen store, that the checkpoint extends the
// last checkpoint this verifier accepted. A checkpoint of the same size with
// another root, a smaller tree, or a larger tree whose prefix hashes to
// another root is a fork: the *ForkError carries both checkpoints.
package tlog

import (
	"crypto/sha256"
	"encoding/hex"

	"golang.org/x/mod/sumdb/tlog"
)

// TileHeight is the height of every hash tile and the log2 of the number
// of entries in a full entry bundle (C2SP tlog-tiles).
const TileHeight = 8

// EntryBundleSize is the number of entries in a full entry bundle.
const EntryBundleSize = 1 << TileHeight

// File names in a log folder.
const (
	CheckpointFile = "checkpoint"
	LivenessFile   = "liveness.json"
	lockFile       = ".lock"
	defsDir        = "defs"
)

// Hash is a node hash of the Merkle tree.
type Hash = tlog.Hash

// RecordHash returns the leaf hash of an entry (RFC 6962: SHA-256 of 0x00
// and the entry's bytes).
func RecordHash(entry []byte) Hash { return tlog.RecordHash(entry) }

// emptyRoot is the root of the tree with no entries: SHA-256 of nothing.
var emptyRoot = Hash(sha256.Sum256(nil))

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
