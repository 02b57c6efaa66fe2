package tlog

import (
	"encoding/binary"
	"errors"
)

// ErrMalformedBundle reports entry bundle bytes that do not hold exactly
// the expected number of length-prefixed entries.
var ErrMalformedBundle = errors.New("tlog: malformed entry bundle")

// maxBundleSize bounds an entry bundle: 256 entries of at most
// MaxEntrySize bytes and their two-byte lengths.
const maxBundleSize = EntryBundleSize * (2 + MaxEntrySize)

// appendBundleEntry appends one entry, with its length prefix, to a bundle.
func appendBundleEntry(bundle, entry []byte) []byte {
	bundle = binary.BigEndian.AppendUint16(bundle, uint16(len(entry)))
	return append(bundle, entry...)
}

// ParseBundle splits an entry bundle into its entries. It requires exactly
// w entries, each non-empty, and no bytes after the last; the entries alias
// data.
func ParseBundle(data []byte, w int) ([][]byte, error) {
	if len(data) > maxBundleSize || w < 1 || w > EntryBundleSize {
		return nil, ErrMalformedBundle
	}
	out := make([][]byte, 0, w)
	for len(data) > 0 {
		if len(data) < 2 || len(out) == w {
			return nil, ErrMalformedBundle
		}
		n := int(binary.BigEndian.Uint16(data))
		if n == 0 || len(data) < 2+n {
			return nil, ErrMalformedBundle
		}
		out = append(out, data[2:2+n:2+n])
		data = data[2+n:]
	}
	if len(out) != w {
		return nil, ErrMalformedBundle
	}
	return out, nil
}
