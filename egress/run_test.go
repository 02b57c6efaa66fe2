package egress

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/stdio"
)

var _ stdio.Server = (*Upstream)(nil)

// TestRunURLWiring is `mcpseal run --url`: stdio.Run with an Upstream as
// its server and the gate in between, the go-sdk client on the stdio side
// and a go-sdk Streamable HTTP server on the other, both generations.
func TestRunURLWiring(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, version string
		stateless     bool
	}{{"legacy", "2025-11-25", false}, {"2026-07-28", "", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdkServer() }, &mcp.StreamableHTTPOptions{Stateless: c.stateless, DisableLocalhostProtection: true})
			srv := httptest.NewTLSServer(h)
			defer srv.Close()
			up, _ := upstreamTo(t, srv, resolveTo(publicIP.String()), Options{})
			store, err := pin.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			id := pin.IdentityForName("https://mcp.example.com/mcp")
			g := gate.New(gate.Config{Identity: id, Pins: store, IDPrefix: gate.NewIDPrefix()})
			cIn, pOut := io.Pipe() // proxy -> client
			pIn, cOut := io.Pipe() // client -> proxy
			done := make(chan stdio.Result, 1)
			go func() {
				res, err := stdio.Run(context.Background(), stdio.Config{Server: up, Gate: g, ClientIn: pIn, ClientOut: pOut, Stderr: io.Discard})
				if err != nil {
					t.Error(err)
				}
				pOut.Close()
				done <- res
			}()
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: cIn, Writer: cOut}, &mcp.ClientSessionOptions{ProtocolVersion: c.version})
			if err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "where", Arguments: map[string]any{"region": "eu"}})
			if err != nil || len(res.Content) != 1 {
				t.Fatalf("call: %v %v", res, err)
			}
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "not-pinned", Arguments: map[string]any{}})
			if err == nil {
				t.Error("a call outside the verified contract went through")
			}
			cs.Close()
			select {
			case r := <-done:
				// The client hung up first: not ServerExited, not blocked.
				if r.ServerExited || r.Gate.Closed && r.Gate.Code != gate.CodeServerExited {
					t.Errorf("result %+v", r)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("stdio.Run did not return after the client closed")
			}
		})
	}
}
