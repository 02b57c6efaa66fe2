// Package probe starts a stdio MCP server, reads everything it shows a
// model — every page of tools, prompts, resources and resource templates,
// and its instructions — and stops it. It never calls a tool, gets a
// prompt or reads a resource.
//
// The probe declares the client capabilities roots, sampling and
// elicitation, so that a server which lists more to clients that declare
// more (server-everything adds a tool for clients with roots) shows its
// widest listing, and that is what a lock records. It speaks the legacy
// handshake (initialize, 2025-11-25) and falls back to the 2026-07-28
// server/discover when a server refuses it. Requests the server sends
// meanwhile are answered: roots/list with no roots, elicitation with a
// decline, sampling with an error, ping with an empty result.
//
// Everything is bounded: the whole probe's time, each frame, the pages of
// a listing (with cursor-loop detection), the number of definitions, the
// non-JSON lines tolerated on stdout and the stderr kept for the error
// message.
//
// # Example
//
//	res, err := probe.Probe(ctx, probe.Config{Argv: []string{"npx", "-y", "@acme/mcp-files@1.4.2", "."}})
//	if err != nil { /* *probe.Error: Reason "exited", "timeout", "paging"... */ }
//	fmt.Println(res.Contract.Len(), "definitions")
package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/stdio"
)

// Defaults for Config's zero fields.
const (
	DefaultTimeout        = 60 * time.Second // npx and uvx may download a package first
	DefaultMaxPages       = 1000             // the gate's own page cap
	DefaultMaxDefinitions = 100000           // the gate's own definition cap
	// DefaultMaxListingBytes is the gate's own bound on a listing's pages.
	DefaultMaxListingBytes = 128 << 20
	// DefaultMaxStderr is how much of the server's stderr is kept (its
	// end) for the error message: enough for a stack trace.
	DefaultMaxStderr = 16 << 10
	// maxNoise bounds the non-JSON lines tolerated on stdout (banners,
	// log lines); a server that prints more is not speaking MCP.
	maxNoise = 1000
	// stopGrace is how long the server may take to exit after its stdin
	// closes, and again after SIGTERM, before it is killed.
	stopGrace = 2 * time.Second
)

// Process is a started server (stdio.StartChild returns one).
type Process interface {
	Stdin() io.WriteCloser
	Stdout() io.Reader
	Stderr() io.Reader
	Wait() error
	Terminate()
	Kill()
}

// Config configures one probe.
type Config struct {
	Argv []string
	// Env is the server's whole environment; nil inherits this process's.
	Env []string
	Dir string

	Timeout        time.Duration
	MaxFrame       int
	MaxPages       int
	MaxDefinitions int
	// MaxListingBytes bounds the bytes of all listing pages, which the
	// probe holds until it parses the contract.
	MaxListingBytes int
	MaxStderr       int
	// Start starts the server; nil means stdio.StartChild (no shell).
	Start func(argv, env []string, dir string) (Process, error)
}

// Result is what a probe saw.
type Result struct {
	Contract *contract.Contract
	// ProtocolVersion is the version the session used.
	ProtocolVersion string
	// Pages counts the listing pages read, per kind.
	Pages map[contract.Kind]int
}

// Reasons in Error.Reason.
const (
	ReasonStart     = "start"                // the command could not be started
	ReasonExited    = "exited"               // the server exited or closed stdout before the probe was done
	ReasonTimeout   = "timeout"              // the probe took longer than Timeout
	ReasonHandshake = "handshake"            // the server refused initialize and server/discover
	ReasonListing   = "listing-failed"       // a listing failed or was malformed
	ReasonPaging    = "paging"               // a cursor loop, or more than MaxPages pages
	ReasonTooMany   = "too-many-definitions" // more than MaxDefinitions definitions
	// ReasonListingTooLarge: the pages came to more than MaxListingBytes.
	ReasonListingTooLarge = "listing-too-large"
	ReasonInvalid         = "invalid-definition" // a definition with no canonical form
	ReasonFrame           = "frame-too-large"    // a frame larger than MaxFrame
	ReasonNoise           = "not-mcp"            // too many lines on stdout that are not JSON-RPC
)

// Error is why a probe failed.
type Error struct {
	Reason string
	// Detail is mcpseal's own description (it may name a kind or a
	// method, never server text).
	Detail string
	// Stderr is the end of the server's stderr. It is server text: show it
	// on a terminal only, with invisible characters escaped.
	Stderr []byte
	Err    error
}

func (e *Error) Error() string {
	s := "probe: " + e.Reason
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Probe starts the server, reads its contract and stops it.
func Probe(ctx context.Context, cfg Config) (*Result, error) {
	cfg.defaults()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	proc, err := cfg.Start(cfg.Argv, cfg.Env, cfg.Dir)
	if err != nil {
		return nil, &Error{Reason: ReasonStart, Detail: err.Error(), Err: err}
	}
	tail := newTail(cfg.MaxStderr)
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		if r := proc.Stderr(); r != nil {
			_, _ = io.Copy(tail, r)
		}
	}()
	s := newSession(ctx, proc, cfg)
	res, perr := s.run()
	stop(proc, s)
	select {
	case <-stderrDone:
	case <-time.After(stopGrace):
	}
	if perr != nil {
		var pe *Error
		if !errors.As(perr, &pe) {
			pe = &Error{Reason: ReasonListing, Detail: perr.Error(), Err: perr}
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && pe.Reason == ReasonExited {
			pe = &Error{Reason: ReasonTimeout, Detail: fmt.Sprintf("no complete contract within %v", cfg.Timeout)}
		}
		pe.Stderr = tail.Bytes()
		return nil, pe
	}
	return res, nil
}

func (cfg *Config) defaults() {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = jsonrpc.DefaultMaxFrame
	}
	if cfg.MaxPages <= 0 {
		cfg.MaxPages = DefaultMaxPages
	}
	if cfg.MaxDefinitions <= 0 {
		cfg.MaxDefinitions = DefaultMaxDefinitions
	}
	if cfg.MaxListingBytes <= 0 {
		cfg.MaxListingBytes = DefaultMaxListingBytes
	}
	if cfg.MaxStderr <= 0 {
		cfg.MaxStderr = DefaultMaxStderr
	}
	if cfg.Start == nil {
		cfg.Start = func(argv, env []string, dir string) (Process, error) { return stdio.StartChild(argv, env, dir) }
	}
}

// stop closes the server's stdin, then escalates to SIGTERM and SIGKILL
// of its process group, each after a bounded wait, and always ends the
// group (npx and uvx leave the real server as a grandchild).
func stop(p Process, s *session) {
	_ = p.Stdin().Close()
	exited := make(chan struct{})
	go func() { _ = p.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(stopGrace):
		p.Terminate()
		select {
		case <-exited:
		case <-time.After(stopGrace):
		}
	}
	p.Kill()
	s.drain()
}
