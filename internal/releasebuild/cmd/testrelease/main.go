// Command testrelease runs releasebuild.Build with every input given as a
// flag, for the end-to-end tests only: they build it without the race
// detector (compressing a release's archives in a race-instrumented test
// binary takes minutes) and run it on the work tree as it is, which
// scripts/release refuses when it has uncommitted changes. Releases are
// made with scripts/release.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/internal/releasebuild"
	"github.com/mcpseal/mcpseal/lock"
)

func main() {
	repo := flag.String("repo", "", "module root")
	version := flag.String("version", "", "release version")
	commit := flag.String("commit", "", "commit to stamp")
	unix := flag.Int64("time", 0, "archive time, Unix seconds")
	targets := flag.String("targets", "", "comma-separated os/arch")
	key := flag.String("key", "", "signing key file")
	out := flag.String("out", "", "output folder")
	flag.Parse()
	if err := run(*repo, *version, *commit, *unix, *targets, *key, *out); err != nil {
		fmt.Fprintf(os.Stderr, "testrelease: %v\n", err)
		os.Exit(1)
	}
}

func run(repo, version, commit string, unix int64, targets, key, out string) error {
	kb, err := os.ReadFile(key)
	if err != nil {
		return err
	}
	signer, err := lock.ParseSigningKey(kb)
	if err != nil {
		return err
	}
	var ts []releasebuild.Target
	for _, s := range strings.Split(targets, ",") {
		t, err := releasebuild.ParseTarget(s)
		if err != nil {
			return err
		}
		ts = append(ts, t)
	}
	_, err = releasebuild.Build(context.Background(), releasebuild.Options{
		Repo: repo, Version: version, Commit: commit, Time: time.Unix(unix, 0), Targets: ts, Signer: signer, Out: out,
		Log: func(format string, args ...any) { fmt.Fprintf(os.Stderr, "testrelease: "+format+"\n", args...) },
	})
	return err
}
