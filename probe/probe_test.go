package probe

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/internal/testmcp"
)

// memProcess runs a testmcp scenario in this process, behind pipes.
type memProcess struct {
	inR, outR   *io.PipeReader
	inW, outW   *io.PipeWriter
	srv         *testmcp.Server
	done        chan struct{}
	cancel      context.CancelFunc
	once        sync.Once
	stderr      io.Reader
	terminateds int
}

func startScenario(t *testing.T, sc *testmcp.Scenario) (*memProcess, func([]string, []string, string) (Process, error)) {
	t.Helper()
	srv, err := testmcp.NewServer(sc)
	if err != nil {
		t.Fatal(err)
	}
	p := &memProcess{srv: srv, done: make(chan struct{}), stderr: strings.NewReader("server log line\n")}
	p.inR, p.inW = io.Pipe()
	p.outR, p.outW = io.Pipe()
	return p, func([]string, []string, string) (Process, error) {
		ctx, cancel := context.WithCancel(context.Background())
		p.cancel = cancel
		go func() {
			_ = srv.Serve(ctx, p.inR, p.outW)
			p.outW.Close()
			close(p.done)
		}()
		return p, nil
	}
}

func (p *memProcess) Stdin() io.WriteCloser { return p.inW }
func (p *memProcess) Stdout() io.Reader     { return p.outR }
func (p *memProcess) Stderr() io.Reader     { return p.stderr }
func (p *memProcess) Wait() error           { <-p.done; return nil }
func (p *memProcess) Terminate()            { p.terminateds++; p.Kill() }
func (p *memProcess) Kill() {
	p.once.Do(func() {
		p.cancel()
		p.inW.CloseWithError(io.EOF)
		p.inR.CloseWithError(io.EOF)
	})
}

func honest() *testmcp.Scenario {
	return &testmcp.Scenario{
		Contract: testmcp.Contract{
			Instructions:      ptr("Use echo to repeat text."),
			Tools:             []testmcp.RawJSON{testmcp.Tool("echo", "Repeats text."), testmcp.Tool("add", "Adds.")},
			Prompts:           []testmcp.RawJSON{`{"name":"greet","description":"Says hello."}`},
			Resources:         []testmcp.RawJSON{`{"uri":"file:///readme","name":"readme"}`},
			ResourceTemplates: []testmcp.RawJSON{`{"uriTemplate":"file:///{p}","name":"file"}`},
		},
	}
}

func ptr(s string) *string { return &s }

func probeScenario(t *testing.T, sc *testmcp.Scenario, cfg Config) (*Result, error, *memProcess) {
	t.Helper()
	p, start := startScenario(t, sc)
	cfg.Start = start
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	res, err := Probe(context.Background(), cfg)
	return res, err, p
}

// TestProbeReadsWholeContract: every kind, every page, the instructions.
func TestProbeReadsWholeContract(t *testing.T) {
	t.Parallel()
	sc := honest()
	sc.PageSize = 1
	res, err, _ := probeScenario(t, sc, Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Contract
	if len(c.Defs[contract.Tools]) != 2 || len(c.Defs[contract.Prompts]) != 1 || len(c.Defs[contract.Resources]) != 1 || len(c.Defs[contract.ResourceTemplates]) != 1 {
		t.Fatalf("contract %+v", c.Defs)
	}
	if c.Instructions == nil || *c.Instructions != "Use echo to repeat text." {
		t.Errorf("instructions %v", c.Instructions)
	}
	if res.Pages[contract.Tools] != 2 || res.ProtocolVersion != "2025-11-25" {
		t.Errorf("pages %v, version %s", res.Pages, res.ProtocolVersion)
	}
}

// TestProbeNeverCallsATool: only the handshake and listings reach the
// server.
func TestProbeNeverCallsATool(t *testing.T) {
	t.Parallel()
	_, err, p := probeScenario(t, honest(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.srv.ReceivedMethods() {
		if !slices.Contains([]string{"initialize", "notifications/initialized", "tools/list", "prompts/list", "resources/list", "resources/templates/list"}, m) {
			t.Errorf("the probe sent %q", m)
		}
	}
}

// TestProbeDeclaresWidestCapabilities: a tool shown only to clients that
// declare roots, sampling and elicitation is recorded.
func TestProbeDeclaresWidestCapabilities(t *testing.T) {
	t.Parallel()
	sc := honest()
	sc.Variants = []testmcp.Variant{{IfClientCaps: []string{"roots", "sampling", "elicitation"}, AddTools: []testmcp.RawJSON{testmcp.Tool("get-roots-list", "Lists roots.")}}}
	res, err, _ := probeScenario(t, sc, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Contract.Lookup(contract.Tools, "get-roots-list"); !ok {
		t.Fatal("the capability-dependent tool is missing")
	}
}

// TestProbeModernOnlyServer: a 2026-07-28-only server is read through
// server/discover.
func TestProbeModernOnlyServer(t *testing.T) {
	t.Parallel()
	sc := honest()
	sc.Versions = []string{testmcp.ModernVersion}
	res, err, _ := probeScenario(t, sc, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ProtocolVersion != testmcp.ModernVersion || len(res.Contract.Defs[contract.Tools]) != 2 || res.Contract.Instructions == nil {
		t.Fatalf("result %+v", res)
	}
}

func wantReason(t *testing.T, err error, reason string) {
	t.Helper()
	var pe *Error
	if !errors.As(err, &pe) || pe.Reason != reason {
		t.Fatalf("got %v, want probe error %s", err, reason)
	}
}

// TestCursorLoopStopped: a server whose cursor repeats cannot hold the
// probe forever.
func TestCursorLoopStopped(t *testing.T) {
	t.Parallel()
	sc := honest()
	sc.PageSize, sc.PagingTrick = 1, testmcp.TrickCursorLoop
	_, err, _ := probeScenario(t, sc, Config{})
	wantReason(t, err, ReasonPaging)
}

// TestEndlessPagesStopped: fresh cursors forever hit the page cap.
func TestEndlessPagesStopped(t *testing.T) {
	t.Parallel()
	sc := honest()
	sc.PagingTrick = testmcp.TrickEndless
	_, err, _ := probeScenario(t, sc, Config{MaxPages: 20})
	wantReason(t, err, ReasonPaging)
}

// TestTooManyDefinitionsStopped: the definition cap holds.
func TestTooManyDefinitionsStopped(t *testing.T) {
	t.Parallel()
	sc := honest()
	sc.PagingTrick = testmcp.TrickEndless
	_, err, _ := probeScenario(t, sc, Config{MaxDefinitions: 10})
	wantReason(t, err, ReasonTooMany)
}

// TestListingFloodStopped (red team): the probe holds every page until
// it parses the contract; endless pages stop at the byte cap before the
// page and definition caps.
func TestListingFloodStopped(t *testing.T) {
	t.Parallel()
	sc := honest()
	sc.PagingTrick = testmcp.TrickEndless
	_, err, _ := probeScenario(t, sc, Config{MaxListingBytes: 4 << 10})
	wantReason(t, err, ReasonListingTooLarge)
}

// TestInvalidCursorIsAListingFailure: a server that refuses its own
// cursor fails the probe.
func TestInvalidCursorIsAListingFailure(t *testing.T) {
	t.Parallel()
	sc := honest()
	sc.PageSize, sc.PagingTrick = 1, testmcp.TrickInvalidCursor
	_, err, _ := probeScenario(t, sc, Config{})
	wantReason(t, err, ReasonListing)
}

// TestSilentServerTimesOut: a server that never answers a listing is
// stopped at the deadline, with its stderr kept.
func TestSilentServerTimesOut(t *testing.T) {
	t.Parallel()
	sc := honest()
	sc.Ignore = []string{"tools/list"}
	start := time.Now()
	_, err, _ := probeScenario(t, sc, Config{Timeout: 300 * time.Millisecond})
	wantReason(t, err, ReasonTimeout)
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	var pe *Error
	errors.As(err, &pe)
	if !strings.Contains(string(pe.Stderr), "server log line") {
		t.Errorf("stderr %q", pe.Stderr)
	}
}

// TestBannerLinesTolerated: non-JSON lines on stdout are skipped.
func TestBannerLinesTolerated(t *testing.T) {
	t.Parallel()
	sc := honest()
	sc.Banner = []string{"Server starting...", "listening on stdio"}
	sc.NoiseBefore = "log: sending"
	if _, err, _ := probeScenario(t, sc, Config{}); err != nil {
		t.Fatal(err)
	}
}

// TestOversizedFrameStopped: a frame past the limit fails the probe
// without being held in memory.
func TestOversizedFrameStopped(t *testing.T) {
	t.Parallel()
	sc := honest()
	sc.Tools = append(sc.Tools, testmcp.Tool("big", strings.Repeat("x", 64<<10)))
	_, err, _ := probeScenario(t, sc, Config{MaxFrame: 16 << 10})
	wantReason(t, err, ReasonFrame)
}

// TestDuplicateKeyDefinitionRefused: a definition with a repeated member
// has no canonical form and fails the probe.
func TestDuplicateKeyDefinitionRefused(t *testing.T) {
	t.Parallel()
	sc := honest()
	sc.Tools = append(sc.Tools, `{"name":"x","description":"honest","description":"evil","inputSchema":{"type":"object"}}`)
	_, err, _ := probeScenario(t, sc, Config{})
	wantReason(t, err, ReasonInvalid)
}

// TestServerThatExitsAtOnce: a server that never speaks.
func TestServerThatExitsAtOnce(t *testing.T) {
	t.Parallel()
	start := func([]string, []string, string) (Process, error) {
		p := &deadProcess{}
		p.inR, p.inW = io.Pipe()
		go io.Copy(io.Discard, p.inR)
		return p, nil
	}
	_, err := Probe(context.Background(), Config{Start: start, Timeout: 5 * time.Second})
	wantReason(t, err, ReasonExited)
}

type deadProcess struct {
	inR *io.PipeReader
	inW *io.PipeWriter
}

func (p *deadProcess) Stdin() io.WriteCloser { return p.inW }
func (p *deadProcess) Stdout() io.Reader     { return strings.NewReader("") }
func (p *deadProcess) Stderr() io.Reader     { return strings.NewReader("Error: API_KEY is not set\n") }
func (p *deadProcess) Wait() error           { return nil }
func (p *deadProcess) Terminate()            {}
func (p *deadProcess) Kill()                 { p.inR.Close() }

// TestCommandNotFound: a command that does not exist is a start failure.
func TestCommandNotFound(t *testing.T) {
	t.Parallel()
	_, err := Probe(context.Background(), Config{Argv: []string{"/nonexistent/mcp-server"}})
	wantReason(t, err, ReasonStart)
}
