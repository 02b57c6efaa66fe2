package lock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"io"
	"path/filepath"
	"strconv"

	"golang.org/x/crypto/ssh"
)

// HostConfigEnv names the environment variable that gives the host
// config's path (a --lock-host-config flag wins over it).
const HostConfigEnv = "MCPSEAL_LOCK_HOST_CONFIG"

// HostConfigFormat is the host config's format tag.
const HostConfigFormat = "mcpseal-lock-host/1"

// maxHostConfig bounds a host config: a handful of keys and paths.
const maxHostConfig = 1 << 20

// HostConfig is a machine's own say on which locks it accepts. It lives
// outside the repository: whoever writes the lock must not be able to
// choose the keys it is checked with. With a host config, a lock must
// carry a manifest signed by one of the trusted keys, for exactly its
// bytes, with a sequence number no lower than the host has seen.
//
//	{
//	  "format": "mcpseal-lock-host/1",
//	  "trusted_keys": ["ssh-ed25519 AAAAC3Nza... ci-signer"],
//	  "trusted_key_files": ["/etc/mcpseal/keys/release.pub"],
//	  "sequence_store": "/var/lib/mcpseal/lock-sequences.json"
//	}
type HostConfig struct {
	Format          string   `json:"format"`
	TrustedKeys     []string `json:"trusted_keys"`
	TrustedKeyFiles []string `json:"trusted_key_files"`
	// SequenceStore is the file where the host records the highest
	// sequence number it has accepted for each lock. Required: without it
	// an older signed manifest would be accepted after a newer one.
	SequenceStore string `json:"sequence_store"`

	path      string
	keys      []ssh.PublicKey
	sequences SequenceStore // nil: the SequenceStore file
}

// UseSequences makes the host record accepted manifests in s (a fleet's
// shared store) instead of the sequence_store file.
func (h *HostConfig) UseSequences(s SequenceStore) { h.sequences = s }

// Sequences returns the store accepted manifests are recorded in.
func (h *HostConfig) Sequences() SequenceStore {
	if h.sequences != nil {
		return h.sequences
	}
	return FileSequences(h.SequenceStore)
}

// LoadHostConfig reads the host config at path, and every key file it
// names. Paths in it must be absolute. Both are the machine owner's files,
// often kept behind a link by configuration management: a final link is
// followed (CheckOutside judges where it leads), but what it leads to must
// be a regular file, and a FIFO never blocks the read.
func LoadHostConfig(path string) (*HostConfig, error) {
	data, err := atomicfile.ReadFileFollow(path, maxHostConfig)
	if err != nil {
		return nil, fmt.Errorf("lock: host config: %w", err)
	}
	var h HostConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("lock: host config %s: %s", path, decodeError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("lock: host config %s: data after the config", path)
	}
	if h.Format != HostConfigFormat {
		return nil, fmt.Errorf("lock: host config %s: format must be %q", path, HostConfigFormat)
	}
	if h.SequenceStore == "" || !filepath.IsAbs(h.SequenceStore) {
		return nil, fmt.Errorf("lock: host config %s: sequence_store must be an absolute path (without it a rollback to an older signed lock goes unnoticed)", path)
	}
	for i, k := range h.TrustedKeys {
		pk, err := ParsePublicKey(k)
		if err != nil {
			return nil, fmt.Errorf("lock: host config %s: trusted_keys[%d]: %v", path, i, err)
		}
		h.keys = append(h.keys, pk)
	}
	for _, f := range h.TrustedKeyFiles {
		if !filepath.IsAbs(f) {
			return nil, fmt.Errorf("lock: host config %s: trusted key file %s must be an absolute path", path, strconv.Quote(f))
		}
		b, err := atomicfile.ReadFileFollow(f, maxKeyFile)
		if err != nil {
			return nil, fmt.Errorf("lock: host config %s: trusted key file: %w", path, err)
		}
		pk, err := ParsePublicKey(string(b))
		if err != nil {
			return nil, fmt.Errorf("lock: trusted key file %s: %v", f, err)
		}
		h.keys = append(h.keys, pk)
	}
	if len(h.keys) == 0 {
		return nil, fmt.Errorf("lock: host config %s trusts no key", path)
	}
	h.path = path
	return &h, nil
}

// Keys returns the trusted public keys.
func (h *HostConfig) Keys() []ssh.PublicKey { return h.keys }

// CheckOutside refuses the host config when it, a key file it names, or
// its sequence store lies inside the repository of the lock at lockPath
// (see RepositoryRoot).
func (h *HostConfig) CheckOutside(lockPath string) error {
	root, err := RepositoryRoot(filepath.Dir(lockPath))
	if err != nil {
		return fmt.Errorf("lock: finding the repository of %s: %w", lockPath, err)
	}
	if err := checkOutside(root, h.path, "host config"); err != nil {
		return err
	}
	for _, f := range h.TrustedKeyFiles {
		if err := checkOutside(root, f, "trusted key file"); err != nil {
			return err
		}
	}
	return checkOutside(root, h.SequenceStore, "sequence store")
}
