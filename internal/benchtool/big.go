package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bigSample is one first session in front of the large server: spawn to
// the last page of tools/list.
type bigSample struct {
	elapsed      time.Duration
	connect      time.Duration // spawn to the end of the handshake (initialize or server/discover)
	tools        int
	listingBytes int // the tools as the client received them, JSON-encoded
	rssKiB       int // the proxy's VmHWM; 0 direct
}

// bigSession spawns argv, connects and lists every tool, page by page.
func bigSession(ctx context.Context, argv []string, home string, g generation, proxied bool, profile string) (bigSample, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = environ(home, profile)
	stderr := &tail{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "benchtool", Version: "1"}, nil)
	start := time.Now()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: g.version})
	if err != nil {
		return bigSample{}, fmt.Errorf("%s: connect: %w\n%s", base(argv[0]), err, stderr)
	}
	defer cs.Close()
	var s bigSample
	s.connect = time.Since(start)
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return bigSample{}, fmt.Errorf("%s: list: %w\n%s", base(argv[0]), err, stderr)
		}
		b, err := json.Marshal(t)
		if err != nil {
			return bigSample{}, err
		}
		s.tools++
		s.listingBytes += len(b) + 1
	}
	s.elapsed = time.Since(start)
	if proxied {
		if s.rssKiB, err = peakRSSKiB(cmd.Process.Pid); err != nil {
			return bigSample{}, err
		}
	}
	return s, nil
}

// bigResult is the large-listing benchmark of one generation.
type bigResult struct {
	Tools        int   `json:"tools"`
	ListingBytes int   `json:"listing_bytes"`
	DirectMS     []num `json:"direct_ms"`
	FirstMS      []num `json:"mcpseal_first_ms"`  // mcpseal run, empty pin store: pins on first use
	PinnedMS     []num `json:"mcpseal_pinned_ms"` // mcpseal run, second session: verifies
	PeakRSSMiB   []num `json:"mcpseal_peak_rss_mib"`
	// Each session's own peak (PeakRSSMiB is the larger of the two).
	FirstRSSMiB  []num `json:"mcpseal_first_rss_mib"`
	PinnedRSSMiB []num `json:"mcpseal_pinned_rss_mib"`
	// The same sessions' handshakes alone (spawn to connected): the rest
	// of each figure above is the listing.
	DirectConnectMS []num `json:"direct_connect_ms"`
	FirstConnectMS  []num `json:"mcpseal_first_connect_ms"`
	PinnedConnectMS []num `json:"mcpseal_pinned_connect_ms"`
}

// runBig alternates, rounds times: the server directly, mcpseal run in
// front of it with an empty pin store (the first session), and a second
// mcpseal session on that store.
func runBig(ctx context.Context, b *binaries, dir string, g generation, rounds int, profiles *profiler) (*bigResult, error) {
	server := []string{b.sdkserver, b.bigDefs}
	gated := append([]string{b.mcpseal, "run", "--name", "big", "--"}, server...)
	r := &bigResult{}
	add := func(v *[]num, d time.Duration) { *v = append(*v, num(float64(d)/1e6)) }
	for i := range rounds {
		home := filepath.Join(dir, fmt.Sprintf("big-home-%s-%d", g.name, i))
		if err := os.MkdirAll(home, 0o700); err != nil {
			return nil, err
		}
		steps := []func() error{
			func() error {
				s, err := bigSession(ctx, server, home, g, false, "")
				if err == nil {
					add(&r.DirectMS, s.elapsed)
					add(&r.DirectConnectMS, s.connect)
					r.Tools, r.ListingBytes = s.tools, s.listingBytes
				}
				return err
			},
			func() error {
				s1, err := bigSession(ctx, gated, home, g, true, profiles.file("big-first", g, i))
				if err != nil {
					return err
				}
				add(&r.FirstMS, s1.elapsed)
				add(&r.FirstConnectMS, s1.connect)
				s2, err := bigSession(ctx, gated, home, g, true, profiles.file("big-pinned", g, i))
				if err != nil {
					return err
				}
				add(&r.PinnedMS, s2.elapsed)
				add(&r.PinnedConnectMS, s2.connect)
				r.PeakRSSMiB = append(r.PeakRSSMiB, num(float64(max(s1.rssKiB, s2.rssKiB))/1024))
				r.FirstRSSMiB = append(r.FirstRSSMiB, num(float64(s1.rssKiB)/1024))
				r.PinnedRSSMiB = append(r.PinnedRSSMiB, num(float64(s2.rssKiB)/1024))
				return nil
			},
		}
		if i%2 == 1 {
			steps[0], steps[1] = steps[1], steps[0]
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return nil, fmt.Errorf("10k-tool session: %w", err)
			}
		}
	}
	return r, nil
}
