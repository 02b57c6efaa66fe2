package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/internal/version"
	"github.com/mcpseal/mcpseal/lock"
	"github.com/mcpseal/mcpseal/release"
)

func init() { register(newVerifyReleaseCmd) }

func newVerifyReleaseCmd(e *env) *cobra.Command {
	var keys []string
	var all bool
	cmd := &cobra.Command{
		Use:   "verify-release SHA256SUMS SHA256SUMS.sig [--key KEY]... [--all]",
		Short: "Check a downloaded release against the pinned release key",
		Long: `Check SHA256SUMS.sig over SHA256SUMS with the release key this binary pins
(stamped in by scripts/release) or the keys given with --key, then check the
SHA-256 of every artifact SHA256SUMS lists that sits beside it. Exit 0 only
when the signature is good, made by a pinned key, at least one artifact was
checked, and every artifact checked matches.

The key is never taken from the download: an attacker who can swap the
archives can swap a key shipped beside them. Pin it beforehand — use an
mcpseal you already trust (built from source, or an earlier release), or
pass the key published in the README with --key.

With --all every listed artifact must be present.`,
		Args: exactArgs(2, "SHA256SUMS and SHA256SUMS.sig"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerifyRelease(e, args[0], args[1], keys, all)
		},
	}
	cmd.Flags().StringArrayVar(&keys, "key", nil, "a pinned release `KEY` (\"ssh-ed25519 AAAA...\"); repeatable; replaces the built-in key")
	cmd.Flags().BoolVar(&all, "all", false, "require every artifact SHA256SUMS lists to be present")
	return cmd
}

// pinnedReleaseKeys returns the keys given with --key, or the built-in one.
func pinnedReleaseKeys(lines []string) ([]ssh.PublicKey, error) {
	if len(lines) == 0 {
		if k := version.ReleaseKey(); k != "" {
			lines = []string{k}
		}
	}
	if len(lines) == 0 {
		return nil, withHint(errors.New("this mcpseal pins no release key (it was not built by scripts/release)"), "pass the published release key with --key \"ssh-ed25519 AAAA...\"")
	}
	var out []ssh.PublicKey
	for i, l := range lines {
		k, err := lock.ParsePublicKey(l)
		if err != nil {
			return nil, &usageError{fmt.Errorf("--key %d: %w", i+1, err)}
		}
		out = append(out, k)
	}
	return out, nil
}

func runVerifyRelease(e *env, sumsPath, sigPath string, keyLines []string, all bool) error {
	pinned, err := pinnedReleaseKeys(keyLines)
	if err != nil {
		return err
	}
	sums, err := atomicfile.ReadFileFollow(sumsPath, release.MaxSums)
	if err != nil {
		return exitWith(ExitFailure, fmt.Errorf("reading %s: %w", sumsPath, err))
	}
	sig, err := atomicfile.ReadFileFollow(sigPath, 4096)
	if err != nil {
		return exitWith(ExitFailure, fmt.Errorf("reading %s: %w", sigPath, err))
	}
	s, k, err := release.Verify(sums, sig, pinned)
	if err != nil {
		if errors.Is(err, release.ErrUntrustedKey) {
			return exitWith(ExitFailure, withHint(err, "signed by %s; if you expected a new release key, get it from a source you trust, never from the download", lock.Fingerprint(k)))
		}
		return exitWith(ExitFailure, err)
	}
	fmt.Fprintf(e.stdout, "signature: good, by pinned release key %s\n", lock.Fingerprint(k))
	dir := filepath.Dir(sumsPath)
	checked, bad, missing := 0, 0, 0
	for _, en := range s.Entries {
		got, err := artifactDigest(filepath.Join(dir, en.Name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing++
			if all {
				fmt.Fprintf(e.stdout, "MISSING  %s\n", en.Name)
			}
			continue
		case err != nil:
			bad++
			fmt.Fprintf(e.stdout, "FAILED   %s: %v\n", en.Name, err)
			continue
		}
		checked++
		if got != en.Digest {
			bad++
			fmt.Fprintf(e.stdout, "MISMATCH %s: sha256 %s, SHA256SUMS says %s\n", en.Name, got, en.Digest)
			continue
		}
		fmt.Fprintf(e.stdout, "ok       %s\n", en.Name)
	}
	switch {
	case bad > 0:
		return exitWith(ExitFailure, fmt.Errorf("%d artifact(s) do not match the signed SHA256SUMS: do not use them", bad))
	case all && missing > 0:
		return exitWith(ExitFailure, fmt.Errorf("%d listed artifact(s) are missing", missing))
	case checked == 0:
		return exitWith(ExitFailure, withHint(errors.New("none of the artifacts SHA256SUMS lists is beside it"), "download the archive into the folder of SHA256SUMS"))
	}
	fmt.Fprintf(e.stdout, "verified %d artifact(s); %d listed but not downloaded\n", checked, missing)
	return nil
}

// artifactDigest hashes one downloaded artifact: a regular file (a final
// link is followed), at most release.MaxArtifact bytes.
func artifactDigest(path string) (string, error) {
	f, err := atomicfile.OpenFollow(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return release.Digest(f)
}
