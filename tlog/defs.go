package tlog

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/mcpseal/mcpseal/contract"
)

// MaxBlobSize bounds one stored definition or instructions text. A
// definition the model reads in full is a few KiB; 1 MiB leaves room for
// large schemas while keeping a hostile server from filling the disk with
// one tool. The crawler refuses larger definitions.
const MaxBlobSize = 1 << 20

// BlobPath returns where the blob with the given SHA-256 hex digest is
// stored: defs/<first two hex>/<digest>.
func BlobPath(digest string) string {
	return defsDir + "/" + digest[:2] + "/" + digest
}

// parseBlobPath returns the digest a blob path names, or false when the
// path is not the canonical path of a digest.
func parseBlobPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, defsDir+"/")
	if !ok {
		return "", false
	}
	dir, d, ok := strings.Cut(rest, "/")
	if !ok || !isHexDigest(d) || dir != d[:2] {
		return "", false
	}
	return d, true
}

// PutBlob stores data under its digest unless a blob with that digest is
// already there (it is then checked, and replaced if damaged).
func PutBlob(st Storage, data []byte) (string, error) {
	if len(data) > MaxBlobSize {
		return "", fmt.Errorf("%w: a definition of %d bytes", ErrTooLarge, len(data))
	}
	d := sha256Hex(data)
	if old, err := st.ReadFile(BlobPath(d), MaxBlobSize); err == nil && sha256Hex(old) == d {
		return d, nil
	}
	return d, st.WriteFile(BlobPath(d), data)
}

// ErrBlobMismatch reports a stored blob whose bytes do not hash to its
// name.
var ErrBlobMismatch = errors.New("tlog: stored definition does not match its digest")

// ReadBlob returns the blob with the given digest, checked.
func ReadBlob(st Storage, digest string) ([]byte, error) {
	if !isHexDigest(digest) {
		return nil, fmt.Errorf("tlog: not a digest")
	}
	b, err := st.ReadFile(BlobPath(digest), MaxBlobSize)
	if err != nil {
		return nil, err
	}
	if sha256Hex(b) != digest {
		return nil, ErrBlobMismatch
	}
	return b, nil
}

// PutContract stores every definition of c and its instructions.
func PutContract(st Storage, c *contract.Contract) error {
	for _, k := range contract.Kinds {
		for _, d := range c.Defs[k] {
			if _, err := PutBlob(st, d.Canonical); err != nil {
				return err
			}
		}
	}
	if c.Instructions != nil {
		if _, err := PutBlob(st, []byte(*c.Instructions)); err != nil {
			return err
		}
	}
	return nil
}

// LoadContract rebuilds the contract an entry records from the stored
// definitions, checking each one's digest, kind and name.
func LoadContract(st Storage, e *Entry) (*contract.Contract, error) {
	raw := map[contract.Kind][][]byte{}
	for _, k := range contract.Kinds {
		for _, ref := range e.Definitions[k] {
			b, err := ReadBlob(st, ref.Digest)
			if err != nil {
				return nil, err
			}
			d, err := contract.NewDefinition(k, b)
			if err != nil || d.Digest != ref.Digest || d.Name != ref.Name {
				return nil, ErrBlobMismatch
			}
			raw[k] = append(raw[k], b)
		}
	}
	var instr *string
	if e.Digests.Instructions != nil {
		b, err := ReadBlob(st, *e.Digests.Instructions)
		if err != nil {
			return nil, err
		}
		s := string(b)
		instr = &s
	}
	c, err := contract.Parse(raw, instr)
	if err != nil {
		return nil, ErrBlobMismatch
	}
	if c.Digests().Contract != e.Digests.Contract {
		return nil, ErrBlobMismatch
	}
	return c, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
