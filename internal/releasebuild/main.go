package releasebuild

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/lock"
)

// KeyEnv names the release signing key file when --key is not given.
const KeyEnv = "MCPSEAL_RELEASE_KEY"

// Main is scripts/release: `release [--out DIR] [--targets LIST] [--key FILE] VERSION`.
func Main(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "the folder for the artifacts (default dist/VERSION); must be empty")
	targets := fs.String("targets", "", "comma-separated os/arch list (default: all six)")
	key := fs.String("key", "", "the Ed25519 signing key `FILE` (OpenSSH; default $"+KeyEnv+")")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: scripts/release [--out DIR] [--targets os/arch,...] [--key FILE] VERSION\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	if err := run(fs.Arg(0), *out, *targets, *key, stderr); err != nil {
		fmt.Fprintf(stderr, "release: error: %v\n", err)
		return 1
	}
	return 0
}

func run(version, out, targetList, keyFile string, stderr io.Writer) error {
	if !ValidVersion(version) {
		return fmt.Errorf("version %q is not a plain semver version such as 0.3.0", version)
	}
	ts := AllTargets
	if targetList != "" {
		ts = nil
		for _, s := range strings.Split(targetList, ",") {
			t, err := ParseTarget(strings.TrimSpace(s))
			if err != nil {
				return err
			}
			ts = append(ts, t)
		}
	}
	if keyFile == "" {
		keyFile = os.Getenv(KeyEnv)
	}
	if keyFile == "" {
		return fmt.Errorf("no signing key: pass --key FILE or set %s (make one with 'mcpseal key generate --out FILE')", KeyEnv)
	}
	kb, err := atomicfile.ReadFileFollow(keyFile, 64<<10)
	if err != nil {
		return err
	}
	signer, err := lock.ParseSigningKey(kb)
	if err != nil {
		return err
	}
	repo, err := gitOut("rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	if dirty, err := gitOut("status", "--porcelain", "--untracked-files=no"); err != nil {
		return err
	} else if dirty != "" {
		return errors.New("the work tree has uncommitted changes: a release is built from a commit")
	}
	commit, err := gitOut("rev-parse", "HEAD")
	if err != nil {
		return err
	}
	when, err := gitOut("log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return err
	}
	secs, err := strconv.ParseInt(when, 10, 64)
	if err != nil {
		return fmt.Errorf("commit time %q: %w", when, err)
	}
	if out == "" {
		out = filepath.Join(repo, "dist", version)
	}
	names, err := Build(context.Background(), Options{
		Repo: repo, Version: version, Commit: commit, Time: time.Unix(secs, 0), Targets: ts, Signer: signer, Out: out,
		Log: func(format string, args ...any) { fmt.Fprintf(stderr, "release: "+format+"\n", args...) },
	})
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintf(stderr, "release: wrote %s\n", filepath.Join(out, n))
	}
	fmt.Fprintf(stderr, "release: signed SHA256SUMS with %s\n", lock.Fingerprint(signer.PublicKey()))
	return nil
}

func gitOut(args ...string) (string, error) {
	b, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(b)), nil
}
