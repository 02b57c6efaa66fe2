package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/internal/pathclock"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A generation is one protocol generation the benchmark speaks.
type generation struct {
	name    string // as reported
	version string // ClientSessionOptions.ProtocolVersion; "" is the SDK's newest, 2026-07-28
	// upstreamPath is the upstream's endpoint for it: the SDK serves
	// 2026-07-28 requests only on a stateless handler.
	upstreamPath string
	urlRoute     string // the gateway's url route to that endpoint
}

var generations = []generation{
	{name: "2026-07-28", version: "", upstreamPath: "/stateless", urlRoute: "url-modern"},
	{name: "2025-11-25", version: "2025-11-25", upstreamPath: "/mcp", urlRoute: "url-legacy"},
}

// A conn is one open client session, and the proxy process behind it if
// there is one.
type conn struct {
	cs    *mcp.ClientSession
	pid   int       // the proxy process; 0 for a direct connection
	start time.Time // when the client started connecting (a stdio path: when the process was spawned)
	close func() error
}

// A path is one way from the client to the server.
type path struct {
	key     string // stable name in the JSON output
	label   string // as printed
	mcpseal bool   // the proxy is mcpseal (a profile may be taken)
	// open starts what the path needs and connects, an mcpseal process
	// as l says.
	open func(ctx context.Context, g generation, l launch) (*conn, error)
}

// launch says how a session's mcpseal process is started: profile, when
// not empty, is its CPU profile file (MCPSEAL_CPUPROFILE); wrap, when
// not empty and profile is set, is a command prefix a stdio mcpseal runs
// under instead (-wrap), its %N replaced by profile without ".pprof",
// and its stderr written to that name with ".stderr" added.
type launch struct {
	profile string
	wrap    []string
	// clock, when not empty, is the file a stdio proxy's path clock is
	// written to (MCPSEAL_PATHCLOCK, -pathclock).
	clock string
}

// wrapped is the command line an mcpseal argv runs as under l, the
// profile file its MCPSEAL_CPUPROFILE names ("" for none) and the file
// its stderr goes to ("" for the benchmark's own tail).
func (l launch) wrapped(argv []string) (cmd []string, profile, stderr string) {
	if l.profile == "" || len(l.wrap) == 0 {
		return argv, l.profile, ""
	}
	name := strings.TrimSuffix(l.profile, ".pprof")
	for _, w := range l.wrap {
		cmd = append(cmd, strings.ReplaceAll(w, "%N", name))
	}
	return append(cmd, argv...), "", name + ".stderr" // the wrapper is the profiler
}

// A sample is one measured session of a path.
type sample struct {
	clock    *pathclock.Report // -pathclock: the proxy's, read after it ended
	startup  time.Duration     // conn.start to the first tools/list result
	perCall  time.Duration     // mean tools/call round trip
	cpuTicks uint64            // the proxy's utime+stime over the measured calls
	schedNS  uint64            // the same at ns resolution
	rssKiB   int               // the proxy's VmHWM at the end of the calls
	syscalls uint64            // the proxy's read and write system calls over the measured calls
	switches uint64            // the proxy's threads' context switches over them
}

// measure runs one session on p: connect, list, warm up, then calls
// measured tools/call round trips, reading the proxy's CPU time just
// before and just after them.
func measure(ctx context.Context, p path, g generation, calls, warmup int, l launch) (sample, error) {
	c, err := p.open(ctx, g, l)
	if err != nil {
		return sample{}, fmt.Errorf("%s: %w", p.key, err)
	}
	s, err := exercise(ctx, c, calls, warmup)
	if cerr := c.close(); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil && l.clock != "" && c.pid != 0 && strings.HasPrefix(p.key, "stdio.") {
		var r pathclock.Report
		if r, err = pathclock.Read(l.clock); err == nil {
			s.clock = &r
		}
	}
	if err != nil {
		return sample{}, fmt.Errorf("%s: %w", p.key, err)
	}
	return s, nil
}

func exercise(ctx context.Context, c *conn, calls, warmup int) (sample, error) {
	var s sample
	if _, err := c.cs.ListTools(ctx, nil); err != nil {
		return s, fmt.Errorf("list: %w", err)
	}
	s.startup = time.Since(c.start)
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	call := func() error {
		res, err := c.cs.CallTool(ctx, params)
		if err != nil {
			return fmt.Errorf("call: %w", err)
		}
		if res.IsError {
			return errors.New("call returned an error result")
		}
		return nil
	}
	for range warmup {
		if err := call(); err != nil {
			return s, err
		}
	}
	var before, after cpuReading
	var err error
	if c.pid != 0 {
		if before, err = readCPU(c.pid); err != nil {
			return s, err
		}
	}
	t0 := time.Now()
	for range calls {
		if err := call(); err != nil {
			return s, err
		}
	}
	s.perCall = time.Since(t0) / time.Duration(calls)
	if c.pid != 0 {
		if after, err = readCPU(c.pid); err != nil {
			return s, err
		}
		s.cpuTicks = after.ticks - before.ticks
		if before.schedNS != 0 && after.schedNS >= before.schedNS {
			s.schedNS = after.schedNS - before.schedNS
		}
		if after.syscalls >= before.syscalls {
			s.syscalls = after.syscalls - before.syscalls
		}
		if after.switches >= before.switches {
			s.switches = after.switches - before.switches
		}
		if s.rssKiB, err = peakRSSKiB(c.pid); err != nil {
			return s, err
		}
	}
	return s, nil
}

// stdioPath runs argv as the client's stdio server. proxied says argv is
// a proxy (its process is measured) rather than the server itself.
func stdioPath(key, label string, argv []string, home string, proxied, isMcpseal bool) path {
	return path{key: key, label: label, mcpseal: isMcpseal, open: func(ctx context.Context, g generation, l launch) (*conn, error) {
		av, profile, stderrName := argv, l.profile, ""
		if isMcpseal {
			av, profile, stderrName = l.wrapped(argv)
		}
		var stderrFile *os.File
		if stderrName != "" {
			f, err := os.Create(stderrName)
			if err != nil {
				return nil, err
			}
			stderrFile = f
		}
		cmd := exec.Command(av[0], av[1:]...)
		cmd.Env = environ(home, profile)
		if l.clock != "" && proxied {
			cmd.Env = append(cmd.Env, pathclock.Env+"="+l.clock)
		}
		stderr := &tail{}
		cmd.Stderr = stderr
		if stderrFile != nil {
			cmd.Stderr = stderrFile // the started process has its own descriptor
			defer stderrFile.Close()
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "benchtool", Version: "1"}, nil)
		start := time.Now()
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: g.version})
		if err != nil {
			return nil, fmt.Errorf("connect: %w\n%s", err, stderr)
		}
		c := &conn{cs: cs, start: start, close: cs.Close}
		if proxied {
			c.pid = cmd.Process.Pid
		}
		return c, nil
	}}
}

// httpConnect connects a go-sdk client to a Streamable HTTP endpoint with
// a transport of its own (no connection shared with another session).
func httpConnect(ctx context.Context, endpoint string, g generation) (*mcp.ClientSession, func(), error) {
	tr := &http.Transport{MaxIdleConnsPerHost: 8}
	client := mcp.NewClient(&mcp.Implementation{Name: "benchtool", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: g.version})
	if err != nil {
		tr.CloseIdleConnections()
		return nil, nil, err
	}
	return cs, tr.CloseIdleConnections, nil
}

// httpPath connects to an endpoint that start (nil: none) brings up for
// the session and stops after it. The endpoint is the started server's
// URL followed by suffix(g), or, without start, suffix(g) alone.
func httpPath(key, label string, isMcpseal bool, start func(profile string) (*server, error), suffix func(generation) string) path {
	return path{key: key, label: label, mcpseal: isMcpseal, open: func(ctx context.Context, g generation, l launch) (*conn, error) {
		profile := l.profile
		var srv *server
		endpoint := suffix(g)
		if start != nil {
			var err error
			if srv, err = start(profile); err != nil {
				return nil, err
			}
			endpoint = srv.url + endpoint
		}
		t0 := time.Now()
		cs, done, err := httpConnect(ctx, endpoint, g)
		if err != nil {
			if srv != nil {
				_ = srv.stop()
				return nil, fmt.Errorf("connect: %w\n%s", err, srv.stderr)
			}
			return nil, fmt.Errorf("connect: %w", err)
		}
		c := &conn{cs: cs, start: t0}
		if srv != nil {
			c.pid = srv.pid()
		}
		c.close = func() error {
			err := cs.Close()
			done()
			if srv != nil {
				if serr := srv.stop(); err == nil {
					err = serr
				}
			}
			return err
		}
		return c, nil
	}}
}
