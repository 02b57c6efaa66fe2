package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/lock"
)

// This file holds the signing commands: key generate, lock sign, and lock
// verify, which checks signatures with a host config.

func init() { register(newKeyCmd) }

// maxSigningKey bounds the private key file read by lock sign.
const maxSigningKey = 64 << 10

func newKeyCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "key",
		Short: "Make keys that sign lock manifests",
		Args:  exactArgs(0, "a subcommand: generate"),
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	var out, comment string
	gen := &cobra.Command{
		Use:   "generate --out FILE [--comment TEXT]",
		Short: "Make an Ed25519 key pair (OpenSSH format) for 'mcpseal lock sign'",
		Long: `Write a new Ed25519 private key to FILE (OpenSSH format, mode 0600) and its
public key to FILE.pub (one authorized_keys line). Existing files are never
overwritten. An Ed25519 key made by 'ssh-keygen -t ed25519' works too.

Put the public key line in each host's config (trusted_keys), outside the
repository; keep the private key where only the signer can read it (a CI
secret). The signatures are SSH signatures of namespace "` + lock.SignatureNamespace + `".`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return &usageError{errors.New("--out FILE is required")}
			}
			priv, pub, err := lock.GenerateKey(comment)
			if err != nil {
				return err
			}
			if err := writeNew(out+".pub", pub, 0o644); err != nil {
				return err
			}
			if err := writeNew(out, priv, 0o600); err != nil {
				os.Remove(out + ".pub")
				return err
			}
			k, err := lock.ParsePublicKey(string(pub))
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "wrote %s (private, keep it secret) and %s.pub\n", out, out)
			fmt.Fprintf(e.stdout, "fingerprint: %s\n", lock.Fingerprint(k))
			fmt.Fprintf(e.stdout, "trust it in a host config (outside the repository):\n  \"trusted_keys\": [%q]\n", lock.KeyString(k))
			return nil
		},
	}
	gen.Flags().StringVar(&out, "out", "", "the private key `FILE` (the public key goes to FILE.pub)")
	gen.Flags().StringVar(&comment, "comment", "mcpseal-lock", "the key's comment")
	cmd.AddCommand(gen)
	return cmd
}

// writeNew creates path with data, refusing to replace a file.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists; mcpseal never overwrites a key", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func newLockSignCmd(e *env) *cobra.Command {
	var path, key string
	var seq uint64
	cmd := &cobra.Command{
		Use:   "sign --key FILE [--lock FILE] [--sequence N]",
		Short: "Write a signed manifest beside the lock",
		Long: `Check the lock's integrity, then write LOCK` + lock.ManifestSuffix + `: the lock's SHA-256, a
sequence number and an Ed25519 signature by the key in FILE (an OpenSSH
private key, from 'mcpseal key generate' or 'ssh-keygen -t ed25519').

The sequence number must grow with every signed lock: hosts refuse a manifest
with a lower number than they have seen (a rollback). By default it is one
more than the existing manifest's; --sequence sets it (it must still be
higher). Sign in one place, such as a CI job on the protected branch, so the
numbers only grow.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if key == "" {
				return &usageError{errors.New("--key FILE is required")}
			}
			_, data, err := lock.ReadFile(path)
			if err != nil {
				return withHint(fmt.Errorf("%s: %w", path, err), "only a lock that passes 'mcpseal lock verify' can be signed")
			}
			kb, err := readKeyFile(key)
			if err != nil {
				return err
			}
			signer, err := lock.ParseSigningKey(kb)
			if err != nil {
				return err
			}
			prev := uint64(0)
			if m, err := lock.ReadManifest(path); err == nil {
				prev = m.Sequence
			} else if !errors.Is(err, fs.ErrNotExist) {
				return withHint(err, "the existing manifest cannot be read; pass --sequence higher than any this lock was signed with")
			}
			next := prev + 1
			if seq != 0 {
				if seq <= prev {
					return &usageError{fmt.Errorf("--sequence %d is not higher than the existing manifest's %d", seq, prev)}
				}
				next = seq
			}
			m, err := lock.Sign(data, next, time.Now(), signer)
			if err != nil {
				return err
			}
			if err := lock.WriteManifest(path, m); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "signed %s: sequence %d, key %s; wrote %s\n", path, next, lock.Fingerprint(signer.PublicKey()), path+lock.ManifestSuffix)
			return nil
		},
	}
	lockFileFlag(cmd, &path)
	cmd.Flags().StringVar(&key, "key", "", "the private key `FILE` (OpenSSH Ed25519)")
	cmd.Flags().Uint64Var(&seq, "sequence", 0, "the sequence `N` (default: the existing manifest's plus one)")
	return cmd
}

// readKeyFile reads the private key a person names with --key: a final
// link is followed (keys are often kept behind one), a FIFO or device is
// refused without blocking.
func readKeyFile(path string) ([]byte, error) {
	b, err := atomicfile.ReadFileFollow(path, maxSigningKey)
	if errors.Is(err, atomicfile.ErrTooLarge) {
		return nil, fmt.Errorf("%s is too large to be a key", path)
	}
	return b, err
}

func newLockVerifyCmd(e *env) *cobra.Command {
	var path, host string
	cmd := &cobra.Command{
		Use:   "verify [--lock FILE] [--host-config FILE]",
		Short: "Check the lock's integrity offline; exit 1 on any fault",
		Long: `Check the whole lock without starting anything: every definition re-hashed
and compared with its digest, every set, instructions, contract and command
digest recomputed, every approval matched with its definition, every package
pin checked for plain versions, and the file's form. Every fault is listed.

With a host config (--host-config, or $` + lock.HostConfigEnv + `) the signed
manifest is checked too, exactly as 'mcpseal run --lock' checks it: trusted
key, digest, and a sequence number no lower than this host has seen (which
is then recorded).`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, data, err := lock.ReadFile(path)
			var ie *lock.IntegrityError
			switch {
			case errors.As(err, &ie):
				for _, f := range ie.Faults {
					fmt.Fprintf(e.stdout, "fault: %s\n", f)
				}
				return exitWith(ExitFailure, fmt.Errorf("%s fails its integrity check (%d fault(s))", path, len(ie.Faults)))
			case err != nil:
				return exitWith(ExitFailure, fmt.Errorf("%s: %w", path, err))
			}
			h, err := hostConfig(e, host)
			if err != nil {
				return err
			}
			if h != nil {
				if err := lock.CheckSignature(path, data, h); err != nil {
					return exitWith(ExitFailure, err)
				}
				m, _ := lock.ReadManifest(path)
				fmt.Fprintf(e.stdout, "signed: sequence %d, by a trusted key, for this lock\n", m.Sequence)
			}
			total, approved := lockCounts(l)
			fmt.Fprintf(e.stdout, "ok: %s: %d server(s), %d definition(s), %d approved, %d pending\n", path, len(l.Servers), total, approved, total-approved)
			return nil
		},
	}
	lockFileFlag(cmd, &path)
	cmd.Flags().StringVar(&host, "host-config", "", "check the signed manifest against this host config `FILE`")
	return cmd
}
