package stdio_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/stdio"
)

func newGate(t *testing.T) *gate.Session {
	t.Helper()
	store, err := pin.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return gate.New(gate.Config{Identity: pin.IdentityForName("t"), Pins: store, IDPrefix: gate.NewIDPrefix()})
}

// alive reports whether pid still runs (and is not a zombie we reaped).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

func TestClientCloseStopsServerThatIgnoresTERM(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	// A server that ignores SIGTERM and its closed stdin, and leaves a
	// grandchild behind that ignores SIGTERM too.
	script := `trap "" TERM; (trap "" TERM; while :; do sleep 0.05; done) & echo $$ $! > ` + pidFile + `; while :; do sleep 0.05; done`
	clientIn, clientW := io.Pipe()
	done := make(chan stdio.Result, 1)
	start := time.Now()
	go func() {
		res, err := stdio.Run(context.Background(), stdio.Config{
			Argv:      []string{"sh", "-c", script},
			Gate:      newGate(t),
			ClientIn:  clientIn,
			ClientOut: io.Discard,
			Stderr:    io.Discard,
			StopGrace: 100 * time.Millisecond,
		})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	var pids []int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(pidFile)
		if err == nil && strings.Count(string(b), " ") == 1 && strings.HasSuffix(string(b), "\n") {
			for _, f := range strings.Fields(string(b)) {
				n, _ := strconv.Atoi(f)
				pids = append(pids, n)
			}
			break
		}
	}
	if len(pids) != 2 {
		t.Fatal("server did not start")
	}
	clientW.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the client closed")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("stopping took %v; want about two grace periods", d)
	}
	time.Sleep(50 * time.Millisecond)
	for _, pid := range pids {
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d survived mcpseal", pid)
		}
	}
}

func TestServerCrashAnswersPendingRequest(t *testing.T) {
	t.Parallel()
	// The server reads one line (initialize) and dies.
	clientIn, clientW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan stdio.Result, 1)
	go func() {
		res, err := stdio.Run(context.Background(), stdio.Config{
			Argv:      []string{"sh", "-c", "read line; exit 3"},
			Gate:      newGate(t),
			ClientIn:  clientIn,
			ClientOut: outW,
			Stderr:    io.Discard,
		})
		if err != nil {
			t.Error(err)
		}
		outW.Close()
		done <- res
	}()
	go io.WriteString(clientW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`+"\n")
	got, _ := io.ReadAll(outR)
	res := <-done
	if !strings.Contains(string(got), `"code":-32004`) || !strings.Contains(string(got), `"id":1`) {
		t.Errorf("client got %q; want a -32004 answer to id 1", got)
	}
	if !res.ServerExited {
		t.Errorf("result %+v: want ServerExited", res)
	}
	clientW.Close()
}

func TestBlockedSessionAnswersUntilClientHangsUp(t *testing.T) {
	t.Parallel()
	// A server whose listing the gate cannot verify (it answers nothing but
	// initialize, with an invalid instructions member): the gate closes the
	// session and stops the server, but the client must keep getting the
	// gate's error for every later request.
	script := `read line; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"instructions":42}}'; while read line; do :; done`
	clientIn, clientW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan stdio.Result, 1)
	go func() {
		res, err := stdio.Run(context.Background(), stdio.Config{
			Argv:      []string{"sh", "-c", script},
			Gate:      newGate(t),
			ClientIn:  clientIn,
			ClientOut: outW,
			Stderr:    io.Discard,
			StopGrace: 100 * time.Millisecond,
		})
		if err != nil {
			t.Error(err)
		}
		outW.Close()
		done <- res
	}()
	lines := make(chan string, 8)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := outR.Read(buf)
			if n > 0 {
				lines <- string(buf[:n])
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	io.WriteString(clientW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`+"\n")
	if got := <-lines; !strings.Contains(got, `"code":-32003`) {
		t.Fatalf("initialize: got %q", got)
	}
	time.Sleep(500 * time.Millisecond) // the server is stopped meanwhile
	io.WriteString(clientW, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	select {
	case got := <-lines:
		if !strings.Contains(got, `"id":2`) || !strings.Contains(got, `"code":-32003`) {
			t.Fatalf("later request: got %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer to a request after the block")
	}
	clientW.Close()
	res := <-done
	if !res.Gate.Closed || res.Gate.Code != -32003 || res.ServerExited {
		t.Errorf("result %+v", res)
	}
}
