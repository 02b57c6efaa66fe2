package httpgw

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/pin"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func wantInternal(t *testing.T, what string, err error) {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != gate.CodeInternal || !strings.Contains(string(we.Data), gate.ReasonInternal) {
		t.Fatalf("%s: got %v, want error %d (%s)", what, err, gate.CodeInternal, gate.ReasonInternal)
	}
}

func TestGatewayPanicClosesOnlyThatSession(t *testing.T) {
	t.Parallel()
	u := newUpstream(t, false)
	var logs lockedBuffer
	w := newWorld(t, u.urlRoute(""), func(c *Config) {
		trust(u.srv)(c)
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		// A policy hook with a bug that only one session's call trips.
		c.Guard = func(string, pin.Identity, *Route) (Guard, error) {
			return Guard{Hooks: gate.Hooks{Call: func(ci gate.CallInfo) gate.Verdict {
				if bytes.Contains(ci.Arguments, []byte("boom")) {
					panic("policy bug")
				}
				return gate.Verdict{Kind: gate.Allow}
			}}}, nil
		}
	})
	ctx := context.Background()
	a, err := w.connect(t, "2025-06-18")
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.connect(t, "2025-06-18")
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "boom secret-words"}})
	wantInternal(t, "the call whose hook panicked", err)
	// Later requests to that session get the closed error.
	_, err = a.ListTools(ctx, nil)
	wantInternal(t, "a later request to the failed session", err)
	// The gateway and its other sessions go on.
	res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("the other session's call: %v %+v", err, res)
	}
	c, err := w.connect(t, "")
	if err != nil {
		t.Fatalf("a new modern session after the failure: %v", err)
	}
	if _, err := tools(t, c); err != nil {
		t.Fatalf("modern listing after the failure: %v", err)
	}
	log := logs.String()
	if !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "internal error") || !strings.Contains(log, "goroutine ") {
		t.Errorf("the panic was not logged with its stack:\n%s", log)
	}
	if strings.Contains(log, "secret-words") {
		t.Errorf("the log carries message content:\n%s", log)
	}
}

func TestGatewayPanicInModernSessionAnswersClientID(t *testing.T) {
	t.Parallel()
	u := newUpstream(t, true)
	w := newWorld(t, u.urlRoute(""), func(c *Config) {
		trust(u.srv)(c)
		c.Guard = func(string, pin.Identity, *Route) (Guard, error) {
			return Guard{Hooks: gate.Hooks{Call: func(gate.CallInfo) gate.Verdict {
				return gate.Verdict{Kind: gate.Later, Work: func() gate.Verdict { panic("provider bug") }}
			}}}, nil
		}
	})
	cs, err := w.connect(t, "")
	if err != nil {
		t.Fatal(err)
	}
	// The SDK matches the answer by its own id: the gateway's id was
	// replaced back.
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	wantInternal(t, "a call whose dispatched decision panicked", err)
}
