package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/site"
	"github.com/mcpseal/mcpseal/tlog"
)

func init() { register(newSiteCmd) }

func newSiteCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "site",
		Short: "Build the static website of a transparency log",
		Args:  exactArgs(0, "a subcommand"),
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	var keyFile, baseURL, now string
	build := &cobra.Command{
		Use:   "build LOGDIR OUT [--key FILE] [--base-url URL]",
		Short: "Verify a log and write its static site into OUT",
		Long: `Verify the log in LOGDIR against the verifier key in FILE (and against the
last checkpoint this machine accepted), then write into OUT (new or empty)
an index of servers, a page per server with its history and labelled
diffs, SVG badges, an Atom feed, monthly reports, and the log's files with
instructions to verify them. No JavaScript. See docs/site.md.

Without --key, the key is the verifier key of the log's own signing key in
$MCPSEAL_HOME/keys (a log this machine made with 'mcpseal log init'); the
command says which it used. Name the key with --key to build the site of
anyone else's log.`,
		Args: exactArgs(2, "a log folder and an output folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			at := time.Now()
			if now != "" {
				t, err := time.Parse(time.RFC3339, now)
				if err != nil {
					return &usageError{errors.New("--now takes an RFC 3339 time")}
				}
				at = t
			}
			if baseURL != "" && (!strings.HasPrefix(baseURL, "https://") && !strings.HasPrefix(baseURL, "http://") || !strings.HasSuffix(baseURL, "/")) {
				return &usageError{errors.New("--base-url must be an http(s) address ending in /")}
			}
			return runSiteBuild(e, args[0], args[1], keyFile, baseURL, at)
		},
	}
	build.Flags().StringVar(&keyFile, "key", "", "the log's verifier key file (default: the key of its signing key in $MCPSEAL_HOME)")
	build.Flags().StringVar(&baseURL, "base-url", "", "the site's public address, ending in / (for the feed and badge snippets)")
	build.Flags().StringVar(&now, "now", "", "the time badges count to (RFC 3339; default now)")
	cmd.AddCommand(build)
	return cmd
}

// maxVerifierKeyFile bounds the verifier key file read for the site: a
// note verifier key is under 200 bytes.
const maxVerifierKeyFile = 4 << 10

func runSiteBuild(e *env, logDir, out, keyFile, baseURL string, now time.Time) error {
	home, err := mcpsealHome(e)
	if err != nil {
		return err
	}
	d, err := tlog.OpenDir(logDir)
	if err != nil {
		return err
	}
	defer d.Close()
	var vkey string
	if keyFile != "" {
		b, err := readLimited(keyFile, maxVerifierKeyFile)
		if err != nil {
			return fmt.Errorf("reading the verifier key: %w", err)
		}
		vkey = strings.TrimSpace(string(b))
	} else {
		// The checkpoint's origin only picks which of this machine's keys
		// to try; that key then verifies the checkpoint.
		origin, err := logOrigin(d)
		if err != nil {
			return err
		}
		vkey, err = tlog.LoadVerifierKey(home, origin)
		if err != nil {
			return &usageError{withHint(errors.New("no --key, and this $MCPSEAL_HOME holds no signing key for the log's origin"),
				"name the log's verifier key with --key FILE")}
		}
		fmt.Fprintf(e.stdout, "verifier key: %s (from the signing key in %s)\n", vkey, tlog.KeyPath(home, origin))
	}
	key, err := tlog.ParseVerifier(vkey)
	if err != nil {
		return fmt.Errorf("reading the verifier key: %w", err)
	}
	v, err := tlog.Verify(d, tlog.VerifyOptions{Key: key, Seen: tlog.SeenDir(home)})
	if err != nil {
		shown := keyFile
		if shown == "" {
			shown = "FILE"
		}
		return withHint(fmt.Errorf("the log does not verify; no site was built: %w", err), "run 'mcpseal log verify %s --key %s' for details", logDir, shown)
	}
	live, err := tlog.ReadLiveness(d)
	if err != nil {
		return fmt.Errorf("reading %s: %w", tlog.LivenessFile, err)
	}
	opts := site.Options{Now: now, BaseURL: baseURL, Key: key, VerifierKey: vkey}
	if err := site.Build(v, d, live, out, opts); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "built the site of %s (%d entries, %d servers) in %s\n", v.Checkpoint.Origin, v.Checkpoint.Size, len(v.Servers()), out)
	return nil
}
