package stdio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/internal/testmcp"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/stdio"
)

// pipeServer runs a testmcp scenario in process as the session's server.
type pipeServer struct {
	srv      *testmcp.Server
	inR      *io.PipeReader
	inW      *io.PipeWriter
	outR     *io.PipeReader
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
}

func startPipeServer(t *testing.T, sc *testmcp.Scenario) *pipeServer {
	t.Helper()
	srv, err := testmcp.NewServer(sc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &pipeServer{srv: srv, inR: inR, inW: inW, outR: outR, cancel: cancel, done: make(chan struct{})}
	go func() {
		_ = srv.Serve(ctx, inR, outW)
		outW.Close()
		close(p.done)
	}()
	return p
}

func (p *pipeServer) Stdin() io.WriteCloser { return p.inW }
func (p *pipeServer) Stdout() io.Reader     { return p.outR }
func (p *pipeServer) Stderr() io.Reader     { return nil }
func (p *pipeServer) Wait() error           { <-p.done; return nil }
func (p *pipeServer) Terminate()            { p.Kill() }
func (p *pipeServer) Kill()                 { p.stopOnce.Do(p.cancel) }

// syncBuffer is a log sink safe for the proxy's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestPanicInGateStepClosesSessionFailClosed(t *testing.T) {
	t.Parallel()
	srv := startPipeServer(t, &testmcp.Scenario{
		Contract: testmcp.Contract{Tools: []testmcp.RawJSON{testmcp.RawJSON(`{"name":"echo","description":"Echo.","inputSchema":{"type":"object"}}`)}},
		Ignore:   []string{"prompts/list"},
	})
	store, err := pin.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	g := gate.New(gate.Config{
		Identity: pin.IdentityForName("t"),
		Pins:     store,
		IDPrefix: gate.NewIDPrefix(),
		Logger:   slog.New(slog.NewTextHandler(&logs, nil)),
		Hooks: gate.Hooks{Call: func(c gate.CallInfo) gate.Verdict {
			panic("policy bug while reading " + string(c.Arguments))
		}},
	})
	clientIn, clientW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan stdio.Result, 1)
	go func() {
		res, err := stdio.Run(context.Background(), stdio.Config{
			Server: srv, Gate: g, ClientIn: clientIn, ClientOut: outW,
			Stderr: io.Discard, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			StopGrace: 200 * time.Millisecond,
		})
		if err != nil {
			t.Error(err)
		}
		outW.Close()
		done <- res
	}()
	c := testmcp.NewClient(outR, clientW)
	if _, err := c.Initialize("2025-11-25", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify("notifications/initialized", nil); err != nil {
		t.Fatal(err)
	}
	// One request forwarded and left unanswered, then the call whose hook
	// panics: both must get mcpseal's internal error.
	_ = c.Send([]byte(`{"jsonrpc":"2.0","id":"waiting","method":"prompts/list"}`))
	_ = c.Send([]byte(`{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"echo","arguments":{"secret":"hunter2"}}}`))
	got := map[string]int{}
	for len(got) < 2 {
		m, err := c.Recv()
		if err != nil {
			t.Fatalf("waiting for the errors (got %v): %v", got, err)
		}
		if !m.IsResponse() {
			continue
		}
		if m.Error == nil {
			t.Fatalf("after the panic the client got a result %s", m.Raw)
		}
		var data gate.ErrorData
		_ = json.Unmarshal(m.Error.Data, &data)
		if m.Error.Code != gate.CodeInternal || data.Reason != gate.ReasonInternal {
			t.Fatalf("client got %s", m.Raw)
		}
		got[string(m.ID)]++
	}
	if got[`"waiting"`] != 1 || got[`"call"`] != 1 {
		t.Fatalf("answers %v", got)
	}
	// The proxy ends on its own, with its own status, and the server never
	// saw the call.
	var res stdio.Result
	select {
	case res = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the panic")
	}
	if !res.Failed || res.Gate.Code != gate.CodeInternal {
		t.Errorf("result %+v: want Failed and code %d", res, gate.CodeInternal)
	}
	for _, m := range srv.srv.ReceivedMethods() {
		if m == "tools/call" {
			t.Error("the call reached the server")
		}
	}
	log := logs.String()
	if !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "internal error") || !strings.Contains(log, "goroutine ") {
		t.Errorf("the panic was not logged with its stack:\n%s", log)
	}
	if strings.Contains(log, "hunter2") {
		t.Errorf("the log carries message content:\n%s", log)
	}
	clientW.Close()
}

func TestPanicInDispatchedWorkClosesSession(t *testing.T) {
	t.Parallel()
	srv := startPipeServer(t, &testmcp.Scenario{
		Contract: testmcp.Contract{Tools: []testmcp.RawJSON{testmcp.RawJSON(`{"name":"echo","description":"Echo.","inputSchema":{"type":"object"}}`)}},
	})
	store, err := pin.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g := gate.New(gate.Config{
		Identity: pin.IdentityForName("t"),
		Pins:     store,
		IDPrefix: gate.NewIDPrefix(),
		Hooks: gate.Hooks{Call: func(gate.CallInfo) gate.Verdict {
			return gate.Verdict{Kind: gate.Later, Work: func() gate.Verdict { panic("provider bug") }}
		}},
	})
	clientIn, clientW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan stdio.Result, 1)
	go func() {
		res, _ := stdio.Run(context.Background(), stdio.Config{Server: srv, Gate: g, ClientIn: clientIn, ClientOut: outW, Stderr: io.Discard, StopGrace: 200 * time.Millisecond})
		outW.Close()
		done <- res
	}()
	c := testmcp.NewClient(outR, clientW)
	if _, err := c.Initialize("2025-11-25", nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.CallTool("echo", map[string]any{})
	var rpcErr *testmcp.RPCError
	if !errorsAs(err, &rpcErr) || rpcErr.Code != gate.CodeInternal {
		t.Fatalf("call: %v", err)
	}
	select {
	case res := <-done:
		if !res.Failed {
			t.Errorf("result %+v", res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	clientW.Close()
}

func errorsAs(err error, target **testmcp.RPCError) bool {
	e, ok := err.(*testmcp.RPCError)
	if ok {
		*target = e
	}
	return ok
}
