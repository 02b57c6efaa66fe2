package stdio_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/pathclock"
	"github.com/mcpseal/mcpseal/stdio"
)

// TestClockTimesEachFrameRead: with a path clock, every frame read from
// either side is counted and timed, its step and its write.
func TestClockTimesEachFrameRead(t *testing.T) {
	t.Parallel()
	script := `read line; printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"up"}}'; cat >/dev/null`
	clientIn, clientW := io.Pipe()
	clk := &pathclock.Clock{}
	done := make(chan error, 1)
	go func() {
		_, err := stdio.Run(context.Background(), stdio.Config{
			Argv:      []string{"sh", "-c", script},
			Gate:      newGate(t),
			ClientIn:  clientIn,
			ClientOut: io.Discard,
			Stderr:    io.Discard,
			StopGrace: time.Second,
			Clock:     clk,
		})
		done <- err
	}()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	if _, err := io.Copy(clientW, strings.NewReader(init)); err != nil {
		t.Fatal(err)
	}
	clientW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end")
	}
	r := clk.Report()
	if r.FromClient.Frames != 1 || r.FromServer.Frames != 1 {
		t.Fatalf("frames timed: %d from the client, %d from the server; want 1 and 1", r.FromClient.Frames, r.FromServer.Frames)
	}
	if r.FromClient.GateNS <= 0 || r.FromServer.GateNS <= 0 || r.FromClient.WriteNS <= 0 {
		t.Errorf("steps not timed: %+v", r)
	}
}
