// Command benchtool measures what mcpseal adds to a real session, in one
// run: the official Go SDK client calls a tool N times on the official Go
// SDK server, directly and through `mcpseal run`, alternating the two so
// that machine noise hits both alike. It prints per-call times, their
// ratio, the start-up time to the first tools/list result, and the peak
// RSS of the mcpseal process.
//
//	go run ./internal/benchtool -calls 2000 -rounds 5
//
// scripts/bench runs it. Absolute times on shared machines are noisy;
// read the ratios.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	calls := flag.Int("calls", 2000, "tools/call round trips per session")
	rounds := flag.Int("rounds", 5, "sessions per mode")
	tools := flag.Int("tools", 40, "tools the server lists")
	legacy := flag.Bool("legacy", false, "use the 2025-11-25 initialize handshake instead of 2026-07-28")
	flag.Parse()
	if err := run(*calls, *rounds, *tools, *legacy); err != nil {
		fmt.Fprintln(os.Stderr, "benchtool:", err)
		os.Exit(1)
	}
}

type sample struct {
	startup time.Duration // spawn to first tools/list result
	perCall time.Duration
	rssKiB  int
}

func run(calls, rounds, ntools int, legacy bool) error {
	dir, err := os.MkdirTemp("", "mcpseal-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "bin")
	for pkg, name := range map[string]string{"./cmd/mcpseal": "mcpseal", "./internal/testmcp/cmd/sdkserver": "sdkserver"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg).CombinedOutput()
		if err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	defs := filepath.Join(dir, "tools.json")
	if err := writeDefs(defs, ntools); err != nil {
		return err
	}
	home := filepath.Join(dir, "home")
	server := []string{filepath.Join(bin, "sdkserver"), defs}
	gated := append([]string{filepath.Join(bin, "mcpseal"), "run", "--name", "bench", "--"}, server...)

	// One gated session first, to pin: every measured one then verifies.
	if _, err := session(gated, home, 1, legacy); err != nil {
		return fmt.Errorf("pinning session: %w", err)
	}
	var direct, through []sample
	for r := range rounds {
		order := [][]string{server, gated}
		if r%2 == 1 {
			order = [][]string{gated, server}
		}
		for _, argv := range order {
			s, err := session(argv, home, calls, legacy)
			if err != nil {
				return err
			}
			if len(argv) == 2 {
				direct = append(direct, s)
			} else {
				through = append(through, s)
			}
		}
	}
	dCall, tCall := median(direct, func(s sample) time.Duration { return s.perCall }), median(through, func(s sample) time.Duration { return s.perCall })
	dStart, tStart := median(direct, func(s sample) time.Duration { return s.startup }), median(through, func(s sample) time.Duration { return s.startup })
	rss := 0
	for _, s := range through {
		rss = max(rss, s.rssKiB)
	}
	proto := "2026-07-28 (server/discover)"
	if legacy {
		proto = "2025-11-25 (initialize)"
	}
	fmt.Printf("mcpseal benchmark: go-sdk client -> go-sdk server, %d tools listed, %d tools/call per session, %d sessions per mode, protocol %s\n", ntools, calls, rounds, proto)
	fmt.Printf("tools/call round trip (median of session means): direct %v, through mcpseal %v, ratio %.3fx (target <= 1.10x)\n", dCall, tCall, float64(tCall)/float64(dCall))
	fmt.Printf("start-up to first tools/list result (median): direct %v, through mcpseal %v, added %v (target < 15ms)\n", dStart.Round(time.Microsecond), tStart.Round(time.Microsecond), (tStart - dStart).Round(time.Microsecond))
	fmt.Printf("peak RSS of the mcpseal process (VmHWM, max over sessions): %.1f MiB (target < 20 MiB)\n", float64(rss)/1024)
	return nil
}

func median(ss []sample, f func(sample) time.Duration) time.Duration {
	v := make([]time.Duration, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func session(argv []string, home string, calls int, legacy bool) (sample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "MCPSEAL_HOME="+home)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	var opts *mcp.ClientSessionOptions
	if legacy {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	start := time.Now()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, opts)
	if err != nil {
		return sample{}, fmt.Errorf("%s: connect: %w", filepath.Base(argv[0]), err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return sample{}, fmt.Errorf("list: %w", err)
	}
	var s sample
	s.startup = time.Since(start)
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	t0 := time.Now()
	for range calls {
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			return sample{}, fmt.Errorf("call: %w", err)
		}
		if res.IsError {
			return sample{}, fmt.Errorf("call returned an error result")
		}
	}
	s.perCall = time.Since(t0) / time.Duration(calls)
	if filepath.Base(argv[0]) == "mcpseal" {
		s.rssKiB = peakRSS(cmd.Process.Pid)
	}
	return s, nil
}

// peakRSS reads VmHWM of a process from /proc (Linux); 0 elsewhere.
func peakRSS(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// writeDefs writes a definitions file with an echo tool and ntools-1
// realistic others.
func writeDefs(path string, ntools int) error {
	type prop map[string]any
	tools := []map[string]any{{
		"name":        "echo",
		"description": "Repeats the text it is given.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": prop{"type": "string", "description": "Text to repeat"}}, "required": []string{"text"}},
	}}
	for i := 1; i < ntools; i++ {
		tools = append(tools, map[string]any{
			"name":        fmt.Sprintf("tool_%03d", i),
			"title":       fmt.Sprintf("Tool %d", i),
			"description": strings.Repeat("Searches the project's documents and returns matching passages with their paths. ", 3),
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"query": prop{"type": "string", "description": "What to look for", "maxLength": 500},
				"limit": prop{"type": "integer", "minimum": 1, "maximum": 100},
				"paths": prop{"type": "array", "items": prop{"type": "string"}},
			}, "required": []string{"query"}},
			"annotations": map[string]any{"readOnlyHint": true, "openWorldHint": false},
		})
	}
	b, err := json.Marshal(map[string]any{"instructions": "Use these tools to search documents.", "tools": tools})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
